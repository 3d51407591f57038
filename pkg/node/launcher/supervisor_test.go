package launcher

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2"
)

// startSupervisor runs a supervisor's reaper for the duration of the test.
func startSupervisor(t *testing.T) *supervisor {
	t.Helper()
	s, stop := runSupervisor(klog.Background())
	t.Cleanup(func() {
		s.killRemaining(time.Second)
		stop()
	})
	return s
}

func TestSupervisorExitStatus(t *testing.T) {
	tests := []struct {
		name   string
		script string
		// stop asks the supervisor to stop the child rather than waiting for it.
		stop bool
		want string
	}{
		{name: "clean exit", script: "exit 0", want: "exit status 0"},
		{name: "failure", script: "exit 3", want: "exit status 3"},
		{name: "signal", script: "kill -9 $$", want: "killed by signal killed"},
		// A child that is stopped says it is ready ($1) once it handles signals as meant.
		{name: "stopped with SIGTERM", script: `touch "$1"; exec sleep 60`, stop: true, want: "killed by signal terminated"},
		{name: "ignores SIGTERM, killed", script: `trap '' TERM; touch "$1"; while :; do sleep 0.05; done`, stop: true, want: "killed by signal killed"},
	}
	s := startSupervisor(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ready := filepath.Join(t.TempDir(), "ready")
			c, err := s.start(tt.name, []string{"/bin/sh", "-c", tt.script, "sh", ready})
			if err != nil {
				t.Fatal(err)
			}
			if tt.stop {
				// Once the shell installed its trap.
				if !waitFor(5*time.Second, func() bool { _, err := os.Stat(ready); return err == nil }) {
					t.Fatalf("%s never got ready", c)
				}
				if !s.stop(c, 300*time.Millisecond) {
					t.Fatalf("%s not reaped after stop", c)
				}
			} else if !waitDone(c.done, 5*time.Second) {
				t.Fatalf("%s not reaped", c)
			}
			if got := describeStatus(c.status); got != tt.want {
				t.Errorf("status %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSupervisorReapsOrphans: a daemonized grandchild (as QEMU under libvirt) is re-parented to
// the subreaper and reaped when it exits, leaving no zombie.
func TestSupervisorReapsOrphans(t *testing.T) {
	if err := becomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	s := startSupervisor(t)
	pidFile := filepath.Join(t.TempDir(), "orphan.pid")
	c, err := s.start("daemonizer", []string{"/bin/sh", "-c", "sleep 0.3 & echo $! > " + pidFile + "; exit 0"})
	if err != nil {
		t.Fatal(err)
	}
	if !waitDone(c.done, 5*time.Second) {
		t.Fatal("daemonizer not reaped")
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got := childPIDs(); !cmp.Equal(got, []int{orphan}) {
		t.Errorf("children after the daemonizer exited: %v, want the orphan %d", got, orphan)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(orphan, 0); err == syscall.ESRCH {
			return // gone, zombie included: it was reaped
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("orphan %d still present (state %s)", orphan, procState(orphan))
}

func TestSupervisorKillRemaining(t *testing.T) {
	if err := becomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	s := startSupervisor(t)
	c, err := s.start("daemonizer", []string{"/bin/sh", "-c", "sleep 60 & sleep 60 & exit 0"})
	if err != nil {
		t.Fatal(err)
	}
	if !waitDone(c.done, 5*time.Second) {
		t.Fatal("daemonizer not reaped")
	}
	if n := len(childPIDs()); n != 2 {
		t.Fatalf("%d orphans, want 2", n)
	}
	s.killRemaining(2 * time.Second)
	if got := childPIDs(); len(got) != 0 {
		t.Errorf("children left after killRemaining: %v", got)
	}
}

// procState is the State line of /proc/<pid>/status.
func procState(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return err.Error()
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "State:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// TestSupervisorStdinStaysDevNull: every child gets /dev/null as its stdin, also after garbage
// collections. The descriptor is opened once; had its *os.File been dropped, the file's cleanup
// would close it, and a later fork would hand the child whatever reused that number (a hung
// ForkExec was seen: the child kept the write end of ForkExec's own status pipe open).
func TestSupervisorStdinStaysDevNull(t *testing.T) {
	s := startSupervisor(t)
	dir := t.TempDir()
	for i := range 3 {
		out := filepath.Join(dir, strconv.Itoa(i))
		c, err := s.start("stdin", []string{"/bin/sh", "-c", "readlink /proc/self/fd/0 > " + out})
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		if !waitDone(c.done, 5*time.Second) {
			t.Fatalf("%s not reaped", c)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(data)); got != os.DevNull {
			t.Fatalf("start %d: the child's stdin is %q, want %s", i, got, os.DevNull)
		}
		// Let collections run, and the cleanups of unreachable files with them; then open and
		// close a few descriptors so that a freed number would be taken again.
		for range 3 {
			runtime.GC()
			time.Sleep(20 * time.Millisecond)
		}
		for range 4 {
			if f, err := os.Open(dir); err == nil {
				defer f.Close()
			}
		}
	}
}
