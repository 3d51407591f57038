package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/uuid"
)

// LibvirtdConf is libvirtd.conf for a daemon whose only client is the node agent: its sockets in
// socketDir (the shared emptyDir), reachable by root only, without authentication (the socket
// permissions are the access control), errors logged to stderr (the container log).
//
// hostUUID is the daemon's host UUID. libvirt refuses to migrate a guest between two daemons
// with the same host UUID ("Attempt to migrate guest to the same host"), and by default takes it
// from the machine's SMBIOS, which two launcher pods on one machine share; each launcher start
// gets its own.
func LibvirtdConf(socketDir, hostUUID string) string {
	return renderConf([][2]string{
		{"unix_sock_dir", quote(socketDir)},
		{"host_uuid", quote(hostUUID)},
		{"unix_sock_rw_perms", quote("0700")},
		{"unix_sock_ro_perms", quote("0700")},
		{"unix_sock_admin_perms", quote("0700")},
		{"auth_unix_rw", quote("none")},
		{"auth_unix_ro", quote("none")},
		{"log_outputs", quote("3:stderr")},
	})
}

// QEMUConf is qemu.conf for QEMU in an unprivileged container: QEMU runs as root (the container's
// root, with the pod's few capabilities); its stdio goes to files rather than virtlogd; no
// ownership is remembered in extended attributes (trusted.* needs CAP_SYS_ADMIN); no cgroup
// controller is set up (the cgroup filesystem is read-only in a container, and QEMU then counts
// against the pod's limits, which is what the pod's requests are sized for).
func QEMUConf() string {
	return renderConf([][2]string{
		{"user", quote("root")},
		{"group", quote("root")},
		// swtpm (devices.tpm) runs as the container's root as well, not as tss.
		{"swtpm_user", quote("root")},
		{"swtpm_group", quote("root")},
		{"stdio_handler", quote("file")},
		{"remember_owner", "0"},
		{"cgroup_controllers", "[ ]"},
	})
}

// WriteConfigs writes libvirtd.conf and qemu.conf into o.ConfigDir and creates the directories
// the daemons expect, and returns the path of libvirtd.conf.
func WriteConfigs(o *Options) (string, error) {
	if err := os.MkdirAll(o.ConfigDir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", o.ConfigDir, err)
	}
	// The socket directory is private to root: the node agent reaches it as root.
	if err := os.MkdirAll(o.SocketDir(), 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", o.SocketDir(), err)
	}
	libvirtd := filepath.Join(o.ConfigDir, "libvirtd.conf")
	files := []struct{ path, content string }{
		{libvirtd, LibvirtdConf(o.SocketDir(), string(uuid.NewUUID()))},
		{filepath.Join(o.ConfigDir, "qemu.conf"), QEMUConf()},
	}
	for _, f := range files {
		if err := writeFileAtomic(f.path, []byte(f.content), 0o644); err != nil {
			return "", err
		}
	}
	return libvirtd, nil
}

// stateDirs are the directories a root libvirtd and virtlogd use in the container's own
// filesystem; libvirt creates most of them, but not all of their parents.
var stateDirs = []string{
	"/run/libvirt",
	// libvirt locks the console's pty with a lock file in /var/lock (-> /run/lock).
	"/run/lock",
	"/var/lib/libvirt/qemu",
	"/var/cache/libvirt/qemu",
	"/var/log/libvirt/qemu",
	// swtpm's state and logs (devices.tpm).
	"/var/lib/libvirt/swtpm",
	"/var/log/swtpm/libvirt/qemu",
}

// makeStateDirs creates stateDirs under root.
func makeStateDirs(root string) error {
	for _, d := range stateDirs {
		d = filepath.Join(root, d)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	return nil
}

// renderConf renders libvirt's config syntax: `key = value` lines, in the given order.
func renderConf(entries [][2]string) string {
	var b strings.Builder
	b.WriteString("# Written by nativevirt-launcher; rewritten at every start.\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "%s = %s\n", e[0], e[1])
	}
	return b.String()
}

// quote is a libvirt config string: double quotes, with backslashes and quotes escaped.
func quote(s string) string {
	return strconv.Quote(s)
}

// writeFileAtomic replaces path with data through a temporary file in the same directory.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
