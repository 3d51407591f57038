package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ProcMemory is the memory of one process from /proc/<pid>/status, in bytes.
type ProcMemory struct {
	// RSS is VmRSS (resident now), HWM is VmHWM (peak resident).
	RSS int64 `json:"rssBytes"`
	HWM int64 `json:"hwmBytes"`
	// Anon and File split RSS: anonymous memory (the Go heap) and mapped files (the binary,
	// the embedded etcd's mmapped bbolt database).
	Anon int64 `json:"rssAnonBytes"`
	File int64 `json:"rssFileBytes"`
}

// ReadProcMemory reads VmRSS and VmHWM of pid.
func ReadProcMemory(pid int) (ProcMemory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcMemory{}, err
	}
	return parseStatusMemory(b)
}

// parseStatusMemory extracts VmRSS and VmHWM ("VmRSS:\t  12345 kB") from a status file.
func parseStatusMemory(status []byte) (ProcMemory, error) {
	var m ProcMemory
	fields := map[string]*int64{"VmRSS": &m.RSS, "VmHWM": &m.HWM, "RssAnon": &m.Anon, "RssFile": &m.File}
	found := map[string]bool{}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		dst := fields[k]
		if !ok || dst == nil {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return m, fmt.Errorf("unexpected %s line %q", k, line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return m, fmt.Errorf("%s: %w", k, err)
		}
		*dst = kb * 1024
		found[k] = true
	}
	if !found["VmRSS"] || !found["VmHWM"] {
		return m, errors.New("no VmRSS/VmHWM in the status (a kernel thread or a zombie?)")
	}
	return m, nil
}

// Cmdline returns the arguments of pid.
func Cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), nil
}

// FlagValue returns the value of --name=value or --name value in args, or "".
func FlagValue(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// PodProcess finds the process of a pod's container by the pod's UID in /proc/<pid>/cgroup
// (the kubelet names pod cgroups pod<uid>, with '_' for '-' under the systemd driver) and the
// base name of its executable.
func PodProcess(podUID, exe string) (int, error) {
	return podProcess("/proc", podUID, exe)
}

func podProcess(proc, podUID, exe string) (int, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return 0, err
	}
	marks := [][]byte{[]byte("pod" + podUID), []byte("pod" + strings.ReplaceAll(podUID, "-", "_"))}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cg, err := os.ReadFile(filepath.Join(proc, e.Name(), "cgroup"))
		if err != nil || !(bytes.Contains(cg, marks[0]) || bytes.Contains(cg, marks[1])) {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join(proc, e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv0, _, _ := bytes.Cut(cmd, []byte{0})
		if filepath.Base(string(argv0)) == exe {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no process %s in the cgroup of pod %s", exe, podUID)
}

// DataDirOf returns where the process's --data-dir is seen from this host: through
// /proc/<pid>/root, which is the container's root filesystem for a pod's process.
func DataDirOf(pid int) (string, error) {
	args, err := Cmdline(pid)
	if err != nil {
		return "", err
	}
	d := FlagValue(args, "data-dir")
	if d == "" {
		return "", fmt.Errorf("process %d has no --data-dir flag", pid)
	}
	return filepath.Join(fmt.Sprintf("/proc/%d/root", pid), d), nil
}

// EtcdDBSize is the size of the embedded etcd's bbolt file (member/snap/db) under a data dir
// (either the dir itself or one level below it, where the embedded etcd may keep its own
// directory), and the disk use of the whole data dir.
func EtcdDBSize(dataDir string) (db, dir int64, err error) {
	err = filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		dir += info.Size()
		if d.Name() == "db" && filepath.Base(filepath.Dir(p)) == "snap" {
			db += info.Size()
		}
		return nil
	})
	if err == nil && db == 0 {
		err = fmt.Errorf("no member/snap/db under %s", dataDir)
	}
	return db, dir, err
}

// CPUShares describes the CPU weight of pid's cgroup and its ancestors below the root, e.g.
// "cpu.shares 51 < 102 < 2048" (cgroup v1) or "cpu.weight 2 < 4 < 79" (v2): under contention a
// pod's process gets CPU in proportion to these, against 1024 shares (v1) or weight 100 (v2)
// of every busy process outside the pods.
func CPUShares(pid int) (string, error) {
	cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", err
	}
	dir, file := "", ""
	for _, line := range strings.Split(string(cg), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "cpu" {
				dir, file = filepath.Join("/sys/fs/cgroup/cpu", parts[2]), "cpu.shares"
			}
		}
		if parts[0] == "0" && parts[1] == "" && file == "" {
			dir, file = filepath.Join("/sys/fs/cgroup", parts[2]), "cpu.weight"
		}
	}
	if file == "" {
		return "", fmt.Errorf("no cpu cgroup for process %d", pid)
	}
	var chain []string
	root := "/sys/fs/cgroup/cpu"
	if file == "cpu.weight" {
		root = "/sys/fs/cgroup"
	}
	for d := dir; d != root && d != "/" && d != "."; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, file))
		if err != nil {
			continue // a container's own cgroup may be gone or unreadable
		}
		chain = append(chain, strings.TrimSpace(string(b)))
	}
	if len(chain) == 0 {
		return "", fmt.Errorf("no %s under %s", file, dir)
	}
	return file + " " + strings.Join(chain, " < "), nil
}
