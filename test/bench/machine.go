package bench

import (
	"bufio"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
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
	// VMDecodeMicros is how fast one of its CPUs is, in a unit of the servers' own work: the
	// microseconds it takes to decode the benchmark's VirtualMachine from JSON into KubeVirt's
	// Go type (the best of several rounds). Machines of one kind differ from day to day
	// (a shared host); runs are comparable only as far as this figure is.
	VMDecodeMicros float64 `json:"vmDecodeMicros,omitempty"`
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
	if d, err := CalibrateCPU(); err == nil {
		m.VMDecodeMicros = float64(d.Nanoseconds()) / 1e3
	}
	return m
}

// CalibrateCPU times one CPU decoding the benchmark's VirtualMachine from JSON into KubeVirt's
// Go type: the best of 7 rounds of 200 decodes, per decode.
func CalibrateCPU() (time.Duration, error) {
	u, err := VMBuilder{GroupVersion: kubevirtv1.SchemeGroupVersion}.Build("calibration", "vm", false)
	if err != nil {
		return 0, err
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		return 0, err
	}
	const rounds, decodes = 7, 200
	best := time.Duration(0)
	for range rounds {
		start := time.Now()
		for range decodes {
			var vm kubevirtv1.VirtualMachine
			if err := json.Unmarshal(data, &vm); err != nil {
				return 0, err
			}
		}
		if d := time.Since(start) / decodes; best == 0 || d < best {
			best = d
		}
	}
	return best, nil
}

// String is the one-line description used in tables.
func (m Machine) String() string {
	s := strconv.Itoa(m.CPUs) + " CPUs (" + m.CPUModel + "), " + strconv.FormatInt(m.MemoryMiB, 10) +
		" MiB, kernel " + m.Kernel + ", " + m.OS + ", " + m.GoVersion
	if m.VMDecodeMicros > 0 {
		s += "; one CPU decodes the benchmark's VM in " + strconv.FormatFloat(m.VMDecodeMicros, 'f', 1, 64) + " µs"
	}
	return s
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
// but idle and iowait), total and steal (time a virtual machine's CPUs waited for the
// hypervisor, counted in busy), in clock ticks.
type CPUTimes struct {
	Busy, Total, Steal uint64
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
		if i == 7 {
			t.Steal = v
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

// StealFraction is the share of the machine's CPU time between t and later that the hypervisor
// gave to other guests.
func (t CPUTimes) StealFraction(later CPUTimes) float64 {
	if later.Total <= t.Total {
		return 0
	}
	return float64(later.Steal-t.Steal) / float64(later.Total-t.Total)
}
