package podfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestContainerRoot(t *testing.T) {
	proc := t.TempDir()
	mk := func(pid, cgroup string, probe bool) {
		dir := filepath.Join(proc, pid)
		if err := os.MkdirAll(filepath.Join(dir, "root", "hotplug"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cgroup), 0o644); err != nil {
			t.Fatal(err)
		}
		if probe {
			if err := os.MkdirAll(filepath.Join(dir, "root", "hotplug", "data"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("10", "0::/kubepods.slice/kubepods-besteffort-pod1234_abcd.slice/cri-containerd-pause.scope\n", false) // sandbox
	mk("11", "0::/kubepods/besteffort/podffff-0000/c1\n", true)                                               // another pod
	mk("12", "0::/kubepods.slice/kubepods-besteffort-pod1234_abcd.slice/cri-containerd-app.scope\n", true)
	if err := os.MkdirAll(filepath.Join(proc, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := ProcRoots{Proc: proc}.ContainerRoot("1234-abcd", "/hotplug/data")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(proc, "12", "root"); root != want {
		t.Errorf("ContainerRoot = %s, want %s", root, want)
	}
	if _, err := (ProcRoots{Proc: proc}).ContainerRoot("1234-abcd", "/hotplug/other"); !errors.Is(err, ErrNoContainer) {
		t.Errorf("missing probe: %v, want ErrNoContainer", err)
	}
}

func TestProcessRoot(t *testing.T) {
	proc := t.TempDir()
	mk := func(pid, cgroup, comm string) {
		dir := filepath.Join(proc, pid)
		if err := os.MkdirAll(filepath.Join(dir, "root"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cgroup), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "comm"), []byte(comm+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("10", "5:devices:/kubepods/besteffort/pod1234-abcd/compute\n", "libvirtd")
	mk("11", "5:devices:/kubepods/besteffort/podffff-0000/compute\n", "qemu-system-x86") // another pod
	mk("12", "5:devices:/kubepods/besteffort/pod1234-abcd/compute\n", "qemu-system-x86")
	root, err := ProcRoots{Proc: proc}.ProcessRoot("1234-abcd", "qemu-system")
	if want := filepath.Join(proc, "12", "root"); err != nil || root != want {
		t.Errorf("ProcessRoot = %s, %v, want %s", root, err, want)
	}
	if _, err := (ProcRoots{Proc: proc}).ProcessRoot("1234-abcd", "swtpm"); !errors.Is(err, ErrNoContainer) {
		t.Errorf("no such process: %v, want ErrNoContainer", err)
	}
}
