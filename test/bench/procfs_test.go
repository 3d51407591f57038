package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStatusMemory(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    ProcMemory
		wantErr string
	}{
		{
			name:   "linux status",
			status: "Name:\tnativevirt-apis\nVmPeak:\t 2000000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nRssAnon:\t   71680 kB\nRssFile:\t   30720 kB\nThreads:\t12\n",
			want:   ProcMemory{RSS: 100 << 20, HWM: 200 << 20, Anon: 70 << 20, File: 30 << 20},
		},
		{
			name:   "old kernel without the split",
			status: "VmHWM:\t 2048 kB\nVmRSS:\t 1024 kB\n",
			want:   ProcMemory{RSS: 1 << 20, HWM: 2 << 20},
		},
		{name: "kernel thread", status: "Name:\tkthreadd\nThreads:\t1\n", wantErr: "no VmRSS"},
		{name: "odd unit", status: "VmRSS:\t 1 MB\nVmHWM:\t 1 kB\n", wantErr: "unexpected VmRSS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatusMemory([]byte(tc.status))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadProcMemorySelf(t *testing.T) {
	m, err := ReadProcMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.HWM < m.RSS {
		t.Errorf("own memory %+v: want 0 < RSS <= HWM", m)
	}
}

func TestFlagValue(t *testing.T) {
	args := []string{"/usr/bin/nativevirt-apiserver", "--secure-port=8443", "--data-dir", "/var/lib/nv", "--v=2"}
	tests := []struct{ name, want string }{
		{"secure-port", "8443"}, {"data-dir", "/var/lib/nv"}, {"v", "2"}, {"missing", ""}, {"data", ""},
	}
	for _, tc := range tests {
		if got := FlagValue(args, tc.name); got != tc.want {
			t.Errorf("FlagValue(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestPodProcess(t *testing.T) {
	proc := t.TempDir()
	write := func(pid, cgroup, cmdline string) {
		d := filepath.Join(proc, pid)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range map[string]string{"cgroup": cgroup, "cmdline": cmdline} {
			if err := os.WriteFile(filepath.Join(d, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	const uid = "0f1e2d3c-aaaa-bbbb-cccc-000000000001"
	write("10", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_aaaa_bbbb_cccc_000000000001.slice/cri-containerd-1.scope\n", "/pause\x00")
	write("11", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_aaaa_bbbb_cccc_000000000001.slice/cri-containerd-2.scope\n", "/usr/bin/nativevirt-apiserver\x00--v=2\x00")
	write("12", "0::/kubepods/burstable/pod0f1e2d3c-aaaa-bbbb-cccc-000000000002/abc\n", "/usr/bin/nativevirt-apiserver\x00")
	write("self", "0::/\n", "x\x00")
	tests := []struct {
		name, uid, exe string
		want           int
		wantErr        bool
	}{
		{name: "systemd cgroup names", uid: uid, exe: "nativevirt-apiserver", want: 11},
		{name: "cgroupfs names", uid: "0f1e2d3c-aaaa-bbbb-cccc-000000000002", exe: "nativevirt-apiserver", want: 12},
		{name: "pause is not the server", uid: uid, exe: "pause", want: 10},
		{name: "unknown pod", uid: "nope", exe: "nativevirt-apiserver", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := podProcess(proc, tc.uid, tc.exe)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("podProcess = %d, %v; want %d, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestEtcdDBSize(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "etcd", "member", "snap")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap, "db"), make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etcd", "member", "wal"), make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	db, total, err := EtcdDBSize(dir)
	if err != nil || db != 4096 || total != 5096 {
		t.Errorf("EtcdDBSize = %d, %d, %v; want 4096, 5096, nil", db, total, err)
	}
	if _, _, err := EtcdDBSize(t.TempDir()); err == nil {
		t.Error("an empty dir has no etcd db; want an error")
	}
}
