package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// procTimes is one process's CPU time so far, in clock ticks: its own (user + system, all its
// threads) and that of its children it waited for (cutime + cstime), which is where the CPU of
// short-lived processes lands (runc under containerd's shim, a container's init under the shim,
// the exec of a probe).
type procTimes struct {
	group string
	start uint64
	ticks uint64
}

// ProcSnapshot is every process's CPU time at one moment, by PID.
type ProcSnapshot map[int]procTimes

// ReadProcSnapshot reads /proc/<pid>/stat of every process.
func ReadProcSnapshot() ProcSnapshot {
	return readProcSnapshot("/proc")
}

func readProcSnapshot(proc string) ProcSnapshot {
	out := ProcSnapshot{}
	entries, err := os.ReadDir(proc)
	if err != nil {
		return out
	}
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(proc, d.Name(), "stat"))
		if err != nil {
			continue
		}
		cg, _ := os.ReadFile(filepath.Join(proc, d.Name(), "cgroup"))
		if t, ok := parseProcStat(b, bytes.Contains(cg, []byte("/kubepods"))); ok {
			out[pid] = t
		}
	}
	return out
}

// parseProcStat reads comm, ppid, utime, stime, cutime, cstime and starttime from a
// /proc/<pid>/stat line ("pid (comm) state ppid ..."; comm may hold spaces and parentheses).
// The children's time counts only for the cluster's own processes, which reap what the cluster
// starts (runc, container inits, the node agent's commands): a shell of another user's work on
// the machine may reap a build that ran for minutes.
func parseProcStat(b []byte, inPod bool) (procTimes, bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procTimes{}, false
	}
	comm := string(b[open+1 : end])
	f := strings.Fields(string(b[end+1:]))
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 20 {
		return procTimes{}, false
	}
	num := func(n int) uint64 {
		v, _ := strconv.ParseUint(f[n-3], 10, 64)
		return v
	}
	t := procTimes{start: num(22), ticks: num(14) + num(15)}
	t.group = componentOf(comm, num(4), inPod)
	if t.group != notTheCluster && t.group != kernelThreads {
		t.ticks += num(16) + num(17)
	}
	return t, true
}

// The components that are not the cluster's.
const (
	kernelThreads = "kernel threads"
	notTheCluster = "not the cluster (other work on the machine)"
	theBenchmark  = "the benchmark itself"
)

// clusterProcesses are the local cluster's processes outside pods, by name.
var clusterProcesses = map[string]bool{"kube-apiserver": true, "kube-controller": true, "kube-scheduler": true,
	"kube-proxy": true, "kubelet": true, "etcd": true, "containerd": true, "runc": true, "multus": true}

// componentOf names the component a process belongs to, by its name (/proc's comm, at most 15
// characters) and whether it runs in a pod; kernel threads are children of kthreadd (PID 2).
func componentOf(comm string, ppid uint64, inPod bool) string {
	if ppid == 2 || ppid == 0 {
		return kernelThreads
	}
	switch {
	case strings.HasPrefix(comm, "containerd-shim"):
		return "containerd-shim (+ runc, container inits)"
	case strings.HasPrefix(comm, "qemu-system"):
		return "QEMU"
	case comm == "nativevirt-laun":
		return "nativevirt-launcher"
	case comm == "nativevirt-hand":
		return "node agent (nativevirt-handler)"
	case comm == "nativevirt-apis":
		return "nativevirt-apiserver"
	case comm == "nativevirt-cont":
		return "nativevirt-controller"
	case comm == "nativevirt-benc":
		return theBenchmark
	case comm == "nativevirt-copy":
		return "nativevirt-copy-disk"
	case inPod || clusterProcesses[comm]:
		return comm
	}
	return notTheCluster
}

// ComponentCPU sums the CPU-seconds of each component over several windows (snapshots taken
// before and after each): the CPU of processes alive at the end (new ones entirely), and that of
// processes which ended in between, so far as a live parent waited for them.
type ComponentCPU struct {
	Windows int
	Seconds map[string]float64
	// Machine is the whole machine's busy time over the same windows (/proc/stat).
	Machine float64
}

// Add accumulates one window.
func (c *ComponentCPU) Add(before, after ProcSnapshot, machineTicks uint64) {
	if c.Seconds == nil {
		c.Seconds = map[string]float64{}
	}
	c.Windows++
	c.Machine += float64(machineTicks) / clockTicks
	for pid, a := range after {
		d := a.ticks
		if b, ok := before[pid]; ok && b.start == a.start {
			if a.ticks < b.ticks {
				continue
			}
			d -= b.ticks
		}
		if d > 0 {
			c.Seconds[a.group] += float64(d) / clockTicks
		}
	}
}

// PerWindow is each component's CPU-seconds per window, the largest first, and the machine's
// busy time not attributed to any process (interrupts, processes nobody waited for).
func (c *ComponentCPU) PerWindow() (names []string, seconds map[string]float64, unattributed float64) {
	seconds = map[string]float64{}
	n := float64(max(1, c.Windows))
	sum := 0.0
	for k, v := range c.Seconds {
		seconds[k] = v / n
		names = append(names, k)
		sum += v
	}
	sort.Slice(names, func(i, j int) bool {
		if seconds[names[i]] != seconds[names[j]] {
			return seconds[names[i]] > seconds[names[j]]
		}
		return names[i] < names[j]
	})
	return names, seconds, (c.Machine - sum) / n
}
