package launcher

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// parseConf reads libvirt's `key = value` syntax back (comments and blank lines skipped).
func parseConf(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			t.Fatalf("line %q is not `key = value`", line)
		}
		if _, dup := out[k]; dup {
			t.Fatalf("key %s set twice", k)
		}
		out[k] = v
	}
	return out
}

func TestLibvirtdConf(t *testing.T) {
	tests := []struct {
		name      string
		socketDir string
		want      map[string]string
	}{{
		name:      "pod run directory",
		socketDir: "/var/run/nativevirt/libvirt",
		want: map[string]string{
			"unix_sock_dir":         `"/var/run/nativevirt/libvirt"`,
			"host_uuid":             `"0d3f5a4e-7b21-4c39-9a55-2f1e6c8b9d01"`,
			"unix_sock_rw_perms":    `"0700"`,
			"unix_sock_ro_perms":    `"0700"`,
			"unix_sock_admin_perms": `"0700"`,
			"auth_unix_rw":          `"none"`,
			"auth_unix_ro":          `"none"`,
			"log_outputs":           `"3:stderr"`,
		},
	}, {
		name:      "quotes are escaped",
		socketDir: `/tmp/a"b\c`,
		want: map[string]string{
			"unix_sock_dir":         `"/tmp/a\"b\\c"`,
			"host_uuid":             `"0d3f5a4e-7b21-4c39-9a55-2f1e6c8b9d01"`,
			"unix_sock_rw_perms":    `"0700"`,
			"unix_sock_ro_perms":    `"0700"`,
			"unix_sock_admin_perms": `"0700"`,
			"auth_unix_rw":          `"none"`,
			"auth_unix_ro":          `"none"`,
			"log_outputs":           `"3:stderr"`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseConf(t, LibvirtdConf(tt.socketDir, "0d3f5a4e-7b21-4c39-9a55-2f1e6c8b9d01"))); diff != "" {
				t.Errorf("LibvirtdConf(%q) (-want +got):\n%s", tt.socketDir, diff)
			}
		})
	}
}

func TestQEMUConf(t *testing.T) {
	want := map[string]string{
		"user":               `"root"`,
		"group":              `"root"`,
		"stdio_handler":      `"file"`,
		"remember_owner":     "0",
		"cgroup_controllers": "[ ]",
		"swtpm_user":         `"root"`,
		"swtpm_group":        `"root"`,
	}
	if diff := cmp.Diff(want, parseConf(t, QEMUConf())); diff != "" {
		t.Errorf("QEMUConf() (-want +got):\n%s", diff)
	}
}

func TestWriteConfigs(t *testing.T) {
	dir := t.TempDir()
	o := Options{RunDir: filepath.Join(dir, "run"), ConfigDir: filepath.Join(dir, "etc", "libvirt")}
	// A stale file from a previous start is replaced.
	if err := os.MkdirAll(o.ConfigDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.ConfigDir, "qemu.conf"), []byte("user = \"nobody\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path, err := WriteConfigs(&o)
	if err != nil {
		t.Fatalf("WriteConfigs: %v", err)
	}
	got := map[string]string{}
	for _, name := range []string{"libvirtd.conf", "qemu.conf"} {
		data, err := os.ReadFile(filepath.Join(o.ConfigDir, name))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = string(data)
	}
	// Every start has its own host UUID (two launchers on one machine must differ for libvirt
	// to migrate between them).
	hostUUID := parseConf(t, got["libvirtd.conf"])["host_uuid"]
	if !regexp.MustCompile(`^"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"$`).MatchString(hostUUID) {
		t.Errorf("host_uuid %s is not a UUID", hostUUID)
	}
	if _, err := WriteConfigs(&o); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if parseConf(t, string(again))["host_uuid"] == hostUUID {
		t.Errorf("two starts got the same host_uuid %s", hostUUID)
	}
	want := map[string]string{
		"libvirtd.conf": LibvirtdConf(filepath.Join(dir, "run", "libvirt"), strings.Trim(hostUUID, `"`)),
		"qemu.conf":     QEMUConf(),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("written configs (-want +got):\n%s", diff)
	}
	if path != filepath.Join(o.ConfigDir, "libvirtd.conf") {
		t.Errorf("WriteConfigs returned %q", path)
	}
	st, err := os.Stat(o.SocketDir())
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o700 {
		t.Errorf("socket directory mode %v, want 0700", perm)
	}
	leftovers, _ := filepath.Glob(filepath.Join(o.ConfigDir, ".*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestOptionsCompleteAndValidate(t *testing.T) {
	long := "/" + strings.Repeat("d", 90)
	tests := []struct {
		name    string
		in      Options
		wantErr []string
	}{{
		name: "defaults",
	}, {
		name:    "negative grace",
		in:      Options{GracePeriod: -time.Second},
		wantErr: []string{"grace period -1s is negative"},
	}, {
		name:    "relative directories",
		in:      Options{RunDir: "run", ConfigDir: "etc"},
		wantErr: []string{`run directory "run" is not an absolute path`, `config directory "etc" is not an absolute path`},
	}, {
		name:    "socket path too long",
		in:      Options{RunDir: long},
		wantErr: []string{"libvirt-sock\" is 112 bytes, the limit is 107", "libvirt-admin-sock\" is 118 bytes"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.in
			o.Complete()
			err := o.Validate()
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: no error, want %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate error %q does not contain %q", err, w)
				}
			}
		})
	}

	var o Options
	o.Complete()
	want := Options{
		RunDir: "/var/run/nativevirt", ConfigDir: "/etc/libvirt",
		Libvirtd: "/usr/sbin/libvirtd", StateRoot: "/",
		ClaimsDir: "/var/run/nativevirt-pvcs", ConfigVolumesDir: "/var/run/nativevirt-config", DisksDir: "/var/run/nativevirt-disks",
		OffGrace: 2 * time.Second, PollInterval: 500 * time.Millisecond, ResyncInterval: 10 * time.Second,
		StartTimeout: 2 * time.Minute, DaemonStopTimeout: 5 * time.Second, ResolvConf: "/etc/resolv.conf",
	}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("Complete() (-want +got):\n%s", diff)
	}
	paths := []string{o.SocketPath(), o.ReadyPath(), o.DHCPConfigPath(), o.URI()}
	wantPaths := []string{"/var/run/nativevirt/libvirt/libvirt-sock", "/var/run/nativevirt/ready", "/var/run/nativevirt/dhcp.json",
		"qemu+unix:///system?socket=/var/run/nativevirt/libvirt/libvirt-sock"}
	if diff := cmp.Diff(wantPaths, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}
