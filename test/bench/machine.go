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
