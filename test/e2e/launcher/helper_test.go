package launcher

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// podCapabilities are the capabilities the launcher pod contract grants the compute container.
var podCapabilities = map[uintptr]bool{
	unix.CAP_DAC_OVERRIDE: true,
	unix.CAP_SETGID:       true,
	unix.CAP_SETUID:       true,
	unix.CAP_SETPCAP:      true,
}

// podCapEff is podCapabilities as /proc/<pid>/status prints CapEff.
const podCapEff = "00000000000001c2"

// privateDirs are the libvirt state directories of the host, replaced by empty tmpfs in the
// launcher's mount namespace, as a container has its own: the host's libvirt (if any) and other
// harness runs are not disturbed, and nothing written there outlives the namespace.
var privateDirs = []string{"/run", "/etc/libvirt", "/var/lib/libvirt", "/var/cache/libvirt", "/var/log/libvirt"}

// helperMain runs in the test binary started with new mount and PID namespaces (it is PID 1
// there): it gives the namespace a container-like filesystem, drops every capability the pod
// would not have, forbids gaining any (no_new_privs, as allowPrivilegeEscalation: false), and
// execs the launcher, which becomes PID 1 in its place.
func helperMain(launcher string, args []string) {
	if err := prepareNamespace(); err != nil {
		fmt.Fprintln(os.Stderr, "launcher harness helper:", err)
		os.Exit(120)
	}
	argv := append([]string{launcher}, args...)
	env := make([]string, 0, len(os.Environ()))
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, helperEnv+"=") {
			env = append(env, e)
		}
	}
	err := syscall.Exec(launcher, argv, env)
	fmt.Fprintln(os.Stderr, "launcher harness helper: exec:", err)
	os.Exit(121)
}

func prepareNamespace() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	// Read the account files before /run (where their copies go) is hidden.
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return err
	}
	group, err := os.ReadFile("/etc/group")
	if err != nil {
		return err
	}
	for _, d := range privateDirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
			return fmt.Errorf("mounting a tmpfs on %s: %w", d, err)
		}
	}
	// The launcher image has the libvirt-qemu account libvirtd insists on; give the namespace
	// one too, without touching the host's files.
	files := map[string]string{
		"/etc/passwd": addLine(string(passwd), "libvirt-qemu:", "libvirt-qemu:x:64055:64055:Libvirt Qemu:/var/lib/libvirt:/usr/sbin/nologin"),
		"/etc/group":  addLine(string(group), "libvirt-qemu:", "libvirt-qemu:x:64055:"),
	}
	for target, content := range files {
		copyPath := "/run/harness" + strings.ReplaceAll(target, "/", "-")
		if err := os.WriteFile(copyPath, []byte(content), 0o644); err != nil {
			return err
		}
		if err := unix.Mount(copyPath, target, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind-mounting %s: %w", target, err)
		}
	}
	return dropCapabilities()
}

// addLine appends line to content unless a line starts with prefix.
func addLine(content, prefix, line string) string {
	for _, l := range strings.Split(content, "\n") {
		if strings.HasPrefix(l, prefix) {
			return content
		}
	}
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	return content + line + "\n"
}

// dropCapabilities limits the bounding set to podCapabilities (a root process's capabilities
// after exec are its bounding set), clears the ambient set and sets no_new_privs.
func dropCapabilities() error {
	data, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return err
	}
	last, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return err
	}
	for c := 0; c <= last; c++ {
		if podCapabilities[uintptr(c)] {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	// An inheritable capability would survive the exec of a root process too.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var caps [2]unix.CapUserData
	if err := unix.Capget(&hdr, &caps[0]); err != nil {
		return fmt.Errorf("reading capabilities: %w", err)
	}
	caps[0].Inheritable, caps[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &caps[0]); err != nil {
		return fmt.Errorf("clearing inheritable capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	return nil
}
