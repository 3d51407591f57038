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

// SmapsRollup is what /proc/<pid>/smaps_rollup says of a process, in bytes: PSSAnon is the
// proportional share of its anonymous memory (heaps, stacks, a guest's RAM), the rest of PSS is
// file-backed (binaries, libraries) and shmem.
type SmapsRollup struct {
	RSS, PSS, PSSAnon int64
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
		case "Pss_Anon:":
			r.PSSAnon = v << 10
		}
	}
	if seen != 2 {
		return r, fmt.Errorf("smaps_rollup without Rss and Pss")
	}
	return r, nil
}

// ProcessName is the name of process pid (/proc/<pid>/comm), or "?".
func ProcessName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// KubeVirtMemoryOverhead is the memory KubeVirt's virt-controller adds to a launcher pod's
// request for a VMI of guest bytes and vcpus, amd64, no TPM, VFIO, SEV, exec probes, downward
// metrics, dedicated CPUs or additionalGuestMemoryOverheadRatio. Checked against KubeVirt's
// source: GetMemoryOverhead, since 2025 KvmLauncherHypervisorResources.GetMemoryOverhead in
// kubevirt/kubevirt pkg/hypervisor/kvm/launcherhypervisorresources.go (before in
// pkg/virt-controller/services/renderresources.go, the same terms but 16Mi of video RAM):
// page tables = ceil(request/1000)·1000/512 bytes of the memory request (virt-api's mutator sets
// the request to the guest's memory when none is given; the same as guest/512 to the byte for
// whole MiB), virt-launcher-monitor 25Mi, virt-launcher 100Mi, virtlogd 25Mi, virtqemud 40Mi,
// QEMU 30Mi, 8Mi per vCPU, 8Mi for the IO thread, and 32Mi of video RAM unless
// autoattachGraphicsDevice is false.
func KubeVirtMemoryOverhead(guest int64, vcpus int, graphics bool) int64 {
	const mi = 1 << 20
	o := (guest>>10)/512<<10 + (25+100+25+40+30)*mi + int64(vcpus)*8*mi + 8*mi
	if graphics {
		o += 32 * mi
	}
	return o
}
