package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// supervisor starts the daemons and reaps every child of the launcher. libvirt daemonizes QEMU,
// so QEMU is re-parented to the launcher (PID 1 of the container, or a child subreaper elsewhere)
// and would stay a zombie after it exits unless someone waits for it; a zombie QEMU also makes
// libvirt's kill(pid, 0) checks succeed and its capability probes hang. The supervisor therefore
// waits for ANY child on SIGCHLD, and hands the exit status of the daemons it started to their
// child record.
//
// Nothing else in the process may wait for children (no os/exec Cmd.Wait): the reaper would
// steal their status.
type supervisor struct {
	log klog.Logger

	// mu is held while forking and while reaping, so that a child cannot be reaped before it
	// is recorded in children.
	mu       sync.Mutex
	children map[int]*child
}

// child is one process started by the supervisor.
type child struct {
	name string
	pid  int
	// done is closed once the child has been reaped; status is valid then.
	done   chan struct{}
	status syscall.WaitStatus
}

// String names the child in logs and errors.
func (c *child) String() string { return fmt.Sprintf("%s (pid %d)", c.name, c.pid) }

// exited tells whether the child has been reaped.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// describeStatus says how a process ended.
func describeStatus(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exit status %d", ws.ExitStatus())
	case ws.Signaled():
		return fmt.Sprintf("killed by signal %s", ws.Signal())
	default:
		return fmt.Sprintf("wait status %#x", uint32(ws))
	}
}

func newSupervisor(log klog.Logger) *supervisor {
	return &supervisor{log: log, children: map[int]*child{}}
}

// becomeSubreaper makes orphaned descendants the launcher's children even when it is not PID 1
// (e.g. run by hand or by a test); as PID 1 of a container it is their reaper anyway.
func becomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("becoming a child subreaper: %w", err)
	}
	return nil
}

// start runs argv[0] with argv and the launcher's environment, stdout and stderr.
func (s *supervisor) start(name string, argv []string) (*child, error) {
	return s.startEnv(name, argv, nil)
}

// startEnv is start with extra environment variables (NAME=value) besides the launcher's own.
func (s *supervisor) startEnv(name string, argv, env []string) (*child, error) {
	null, err := devNull()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Dir:   "/",
		Env:   append(os.Environ(), env...),
		Files: []uintptr{null.Fd(), 1, 2},
		// Its own process group: a terminal's ^C reaches the launcher, which stops the daemons
		// in order, rather than every process at once.
		Sys: &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &child{name: name, pid: pid, done: make(chan struct{})}
	s.children[pid] = c
	s.log.Info("Started", "process", name, "pid", pid, "argv", argv)
	return c, nil
}

// devNull is /dev/null, opened once for the children's stdin. The *os.File stays referenced
// here for the life of the process: a dropped one is closed by its cleanup after a garbage
// collection, and the next fork would hand the child whatever reused that descriptor's number
// (once the write end of ForkExec's own status pipe, and ForkExec waited forever).
var devNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

// run reaps children until ctx ends: on every SIGCHLD, and every second in case a signal was
// coalesced with another.
func (s *supervisor) run(ctx context.Context) {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGCHLD)
	defer signal.Stop(sigs)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		s.reap()
		select {
		case <-ctx.Done():
			return
		case <-sigs:
		case <-tick.C:
		}
	}
}

// reap waits for every child that has exited, without blocking.
func (s *supervisor) reap() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		c, ok := s.children[pid]
		if !ok {
			s.log.V(2).Info("Reaped a descendant", "pid", pid, "status", describeStatus(ws))
			continue
		}
		delete(s.children, pid)
		c.status = ws
		close(c.done)
		s.log.Info("Process exited", "process", c.name, "pid", pid, "status", describeStatus(ws))
	}
}

// stop sends SIGTERM to c and waits up to timeout for it to be reaped, then sends SIGKILL and
// waits again. It returns false when the child still has not been reaped.
func (s *supervisor) stop(c *child, timeout time.Duration) bool {
	if c == nil || c.exited() {
		return true
	}
	s.log.Info("Stopping", "process", c.name, "pid", c.pid)
	_ = syscall.Kill(c.pid, syscall.SIGTERM)
	if waitDone(c.done, timeout) {
		return true
	}
	s.log.Info("Did not stop in time, killing", "process", c.name, "pid", c.pid, "timeout", timeout)
	_ = syscall.Kill(c.pid, syscall.SIGKILL)
	return waitDone(c.done, timeout)
}

// killRemaining kills every process still a child of the launcher (QEMU left behind by a dead
// libvirtd, for instance) and reaps them, so that nothing outlives the launcher even when it is
// not PID 1 of its own PID namespace.
func (s *supervisor) killRemaining(timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		pids := childPIDs()
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			s.log.Info("Killing a remaining process", "pid", pid, "command", commandOf(pid))
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
		s.reap()
		if time.Now().After(deadline) {
			s.log.Info("Processes still present", "pids", childPIDs())
			return
		}
	}
}

// childPIDs lists the launcher's children from /proc/self/task/*/children.
func childPIDs() []int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// commandOf is the command name of pid, for logs.
func commandOf(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(data))
}

// waitDone waits up to timeout for done to be closed.
func waitDone(done <-chan struct{}, timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
