package podfs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// ErrNoContainer (wrapped) is returned by ContainerRoot when no process of the pod shows the
// probed path yet.
var ErrNoContainer = errors.New("no container process of the pod found")

// ProcRoots finds the root directories of pods' containers through the node's /proc (the
// node agent shares the host's PID namespace).
type ProcRoots struct {
	// Proc is the proc file system, /proc by default.
	Proc string
}

// ContainerRoot returns /proc/<pid>/root of a process of the pod with podUID under which probe
// (an absolute path in the container) exists: the container that mounts it, not the pod's
// sandbox. The kubelet puts every container of a pod in a cgroup named after the pod's UID
// (pod<uid> with cgroupfs, pod<uid_with_underscores> with systemd).
func (r ProcRoots) ContainerRoot(podUID types.UID, probe string) (string, error) {
	root, err := r.podProcess(podUID, func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, "root", probe))
		return err == nil
	})
	if err != nil || root != "" {
		return root, err
	}
	return "", fmt.Errorf("pod %s: %w showing %s", podUID, ErrNoContainer, probe)
}

// podProcess returns /proc/<pid>/root of the first process in the pod's cgroup for whose
// /proc/<pid> directory match holds, or "" when none does.
func (r ProcRoots) podProcess(podUID types.UID, match func(dir string) bool) (string, error) {
	proc := r.Proc
	if proc == "" {
		proc = "/proc"
	}
	entries, err := os.ReadDir(proc)
	if err != nil {
		return "", err
	}
	uid := string(podUID)
	alt := strings.ReplaceAll(uid, "-", "_")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		dir := filepath.Join(proc, e.Name())
		if inPodCgroup(filepath.Join(dir, "cgroup"), uid, alt) && match(dir) {
			return filepath.Join(dir, "root"), nil
		}
	}
	return "", nil
}

func inPodCgroup(path, uid, alt string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.Contains(line, uid) || strings.Contains(line, alt) {
			return true
		}
	}
	return false
}

// ProcessRoot returns /proc/<pid>/root of a process of the pod with podUID whose command name
// (/proc/<pid>/comm) starts with comm: the container running that program, found without
// resolving paths in it (an absolute symbolic link in a container, such as /var/run -> /run,
// resolves against the node's root when followed from /proc/<pid>/root).
func (r ProcRoots) ProcessRoot(podUID types.UID, comm string) (string, error) {
	root, err := r.podProcess(podUID, func(dir string) bool {
		name, err := os.ReadFile(filepath.Join(dir, "comm"))
		return err == nil && strings.HasPrefix(string(name), comm)
	})
	if err != nil || root != "" {
		return root, err
	}
	return "", fmt.Errorf("pod %s: %w running %s", podUID, ErrNoContainer, comm)
}
