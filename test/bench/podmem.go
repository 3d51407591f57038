package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PodPIDs are the processes in the cgroup of the pod with podUID (see PodProcess).
func PodPIDs(podUID string) ([]int, error) {
	return podPIDs("/proc", podUID)
}

func podPIDs(proc, podUID string) ([]int, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil, err
	}
	marks := [][]byte{[]byte("pod" + podUID), []byte("pod" + strings.ReplaceAll(podUID, "-", "_"))}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cg, err := os.ReadFile(filepath.Join(proc, e.Name(), "cgroup"))
		if err == nil && (bytes.Contains(cg, marks[0]) || bytes.Contains(cg, marks[1])) {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("no process in the cgroup of pod %s", podUID)
	}
	return pids, nil
}

// SmapsRollup is what /proc/<pid>/smaps_rollup says of a process, in bytes.
type SmapsRollup struct {
	RSS, PSS int64
}

// ReadSmapsRollup reads /proc/<pid>/smaps_rollup.
func ReadSmapsRollup(pid int) (SmapsRollup, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return SmapsRollup{}, err
	}
	return parseSmapsRollup(b)
}

// parseSmapsRollup reads the Rss: and Pss: lines ("Pss:   1234 kB").
func parseSmapsRollup(b []byte) (SmapsRollup, error) {
	var r SmapsRollup
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return r, fmt.Errorf("smaps_rollup: %q: %w", sc.Text(), err)
		}
		switch f[0] {
		case "Rss:":
			r.RSS, seen = v<<10, seen+1
		case "Pss:":
			r.PSS, seen = v<<10, seen+1
		}
	}
	if seen != 2 {
		return r, fmt.Errorf("smaps_rollup without Rss and Pss")
	}
	return r, nil
}

// KubeVirtMemoryOverhead is the memory KubeVirt's virt-controller adds to a launcher pod's
// request for a VMI of guest bytes and vcpus (GetMemoryOverhead in its renderresources.go, amd64,
// no TPM, VFIO or SEV): the guest's page tables (guest/512), virt-launcher-monitor 25Mi,
// virt-launcher 100Mi, virtlogd 25Mi, virtqemud 40Mi, QEMU 30Mi, 8Mi per vCPU, 8Mi for the IO
// thread, and 32Mi of video RAM when a graphics device is attached (the default).
func KubeVirtMemoryOverhead(guest int64, vcpus int, graphics bool) int64 {
	const mi = 1 << 20
	o := (guest>>10)/512<<10 + (25+100+25+40+30)*mi + int64(vcpus)*8*mi + 8*mi
	if graphics {
		o += 32 * mi
	}
	return o
}
