package bench

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes where the benchmarks ran, so that a table is never read without it.
type Machine struct {
	// CPUs is what nproc reports; CPUModel the model name of the first CPU.
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpuModel"`
	// MemoryMiB is MemTotal of /proc/meminfo.
	MemoryMiB int64 `json:"memoryMiB"`
	// Kernel is the running kernel release; OS the distribution's pretty name.
	Kernel string `json:"kernel"`
	OS     string `json:"os"`
	// GoVersion built the benchmark.
	GoVersion string `json:"goVersion"`
}

// ReadMachine describes this machine; fields it cannot read stay empty.
func ReadMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	m.CPUModel = fieldOf("/proc/cpuinfo", "model name", ":")
	if kb, err := strconv.ParseInt(strings.TrimSuffix(fieldOf("/proc/meminfo", "MemTotal", ":"), " kB"), 10, 64); err == nil {
		m.MemoryMiB = kb / 1024
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.OS = strings.Trim(fieldOf("/etc/os-release", "PRETTY_NAME", "="), `"`)
	return m
}

// String is the one-line description used in tables.
func (m Machine) String() string {
	return strconv.Itoa(m.CPUs) + " CPUs (" + m.CPUModel + "), " + strconv.FormatInt(m.MemoryMiB, 10) +
		" MiB, kernel " + m.Kernel + ", " + m.OS + ", " + m.GoVersion
}

// LoadAverage is the 1-minute load average, or 0 when unknown.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// fieldOf returns the trimmed value of the first line "key<sep>value" of a file, or "".
func fieldOf(path, key, sep string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), sep)
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// CPUTimes is the machine's CPU time so far, from the "cpu" line of /proc/stat: busy (everything
// but idle and iowait) and total, in clock ticks.
type CPUTimes struct {
	Busy, Total uint64
}

// ReadCPUTimes reads /proc/stat; zero when it cannot.
func ReadCPUTimes() CPUTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}
	}
	return parseCPUTimes(b)
}

func parseCPUTimes(stat []byte) CPUTimes {
	line, _, _ := strings.Cut(string(stat), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return CPUTimes{}
	}
	var t CPUTimes
	// user nice system idle iowait irq softirq steal (guest time is included in user).
	for i, s := range f[1:min(len(f), 9)] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return CPUTimes{}
		}
		t.Total += v
		if i != 3 && i != 4 {
			t.Busy += v
		}
	}
	return t
}

// BusyFraction is the share of the machine's CPU time that was busy between t and later.
func (t CPUTimes) BusyFraction(later CPUTimes) float64 {
	if later.Total <= t.Total {
		return 0
	}
	return float64(later.Busy-t.Busy) / float64(later.Total-t.Total)
}
