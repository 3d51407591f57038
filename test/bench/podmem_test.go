package bench

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseSmapsRollup(t *testing.T) {
	got, err := parseSmapsRollup([]byte(`55d0c0a00000-7ffc8a5fe000 ---p 00000000 00:00 0                          [rollup]
Rss:              150000 kB
Pss:               90000 kB
Pss_Dirty:         80000 kB
Shared_Clean:      20000 kB
`))
	if err != nil {
		t.Fatal(err)
	}
	if got.RSS != 150000<<10 || got.PSS != 90000<<10 {
		t.Errorf("got %+v", got)
	}
	if _, err := parseSmapsRollup([]byte("Rss: 1 kB\n")); err == nil {
		t.Error("no error without Pss")
	}
}

func TestKubeVirtMemoryOverhead(t *testing.T) {
	const mi = 1 << 20
	// The demo VM: 128Mi, 1 vCPU: 256Ki of page tables, 220Mi fixed, 8Mi vCPU, 8Mi IO thread, 32Mi video.
	if got, want := KubeVirtMemoryOverhead(128*mi, 1, true), int64(256<<10+268*mi); got != want {
		t.Errorf("demo VM: %d, want %d", got, want)
	}
	// 1Gi, 2 vCPUs, no graphics.
	if got, want := KubeVirtMemoryOverhead(1024*mi, 2, false), int64(2*mi+244*mi); got != want {
		t.Errorf("1Gi/2 vCPUs: %d, want %d", got, want)
	}
}

func TestPodPIDs(t *testing.T) {
	proc := t.TempDir()
	write := func(pid, cgroup string) {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, pid, "cgroup"), []byte(cgroup), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("10", "4:memory:/kubepods/burstable/pod1234-ab/c1\n")
	write("11", "0::/kubepods.slice/kubepods-pod1234_ab.slice/cri-x.scope\n")
	write("12", "4:memory:/kubepods/burstable/pod9999/c1\n")
	write("self", "x")
	got, err := podPIDs(proc, "1234-ab")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{10, 11}) {
		t.Errorf("got %v, want [10 11]", got)
	}
	if _, err := podPIDs(proc, "none"); err == nil {
		t.Error("no error for a pod without processes")
	}
}
