package launcher

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/klog/v2"
)

// lockedElsewhere tells whether a process other than this description holds path's lock.
func lockedElsewhere(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

// startWithCopies runs a launcher that holds dir/bin/launcher.lock and awaits two copies.
func startWithCopies(t *testing.T) (opts Options, copies []string, cancel context.CancelFunc, errc chan error) {
	t.Helper()
	dir := shortTempDir(t)
	opts = testOptions(t, dir, "exec sleep 60")
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	opts.HoldLock = filepath.Join(dir, "bin", "launcher.lock")
	copies = []string{filepath.Join(dir, "disks", "a", "disk.img"), filepath.Join(dir, "disks", "b", "disk.img")}
	opts.AwaitFiles = copies
	h := newFakeHypervisor(map[string]*fakeGuest{})
	l, err := New(opts, func(string) (Hypervisor, error) { return h, nil }, klog.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	errc = make(chan error, 1)
	go func() { errc <- l.Run(ctx) }()
	if !waitFor(5*time.Second, func() bool { return fileExists(opts.HoldLock) && lockedElsewhere(t, opts.HoldLock) }) {
		t.Fatal("the launcher did not take its lock")
	}
	return opts, copies, cancel, errc
}

func writeCopy(t *testing.T, path, content string) {
	t.Helper()
	// As nativevirt-copy-disk does: into place by rename, never seen half written.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func runResult(t *testing.T, errc chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

// The launcher reports ready only once every copy is in place, holds its lock while it runs
// and releases it when it ends.
func TestRunAwaitsTheCopies(t *testing.T) {
	opts, copies, cancel, errc := startWithCopies(t)
	ready := filepath.Join(opts.RunDir, "ready")
	writeCopy(t, copies[0], "a")
	if waitFor(300*time.Millisecond, func() bool { return fileExists(ready) }) {
		t.Fatal("ready with one of two copies in place")
	}
	writeCopy(t, copies[1], "b")
	if !waitFor(5*time.Second, func() bool { return fileExists(ready) }) {
		t.Fatal("not ready 5 s after both copies were in place")
	}
	if !lockedElsewhere(t, opts.HoldLock) {
		t.Error("the lock is not held while the launcher runs")
	}
	cancel()
	if err := runResult(t, errc); err != nil {
		t.Errorf("Run: %v", err)
	}
	if lockedElsewhere(t, opts.HoldLock) {
		t.Error("the lock is still held after Run returned")
	}
}

// A copy container's failure ends the launcher with its message, before it is ever ready.
func TestRunFailsWithACopy(t *testing.T) {
	opts, copies, _, errc := startWithCopies(t)
	writeCopy(t, copies[1]+FailedSuffix, "no regular file under /disk\n")
	err := runResult(t, errc)
	if err == nil || !errors.Is(err, errCopyFailed) || !strings.Contains(err.Error(), "no regular file under /disk") {
		t.Errorf("Run = %v, want the copy's failure", err)
	}
	if fileExists(filepath.Join(opts.RunDir, "ready")) {
		t.Error("ready marker left behind")
	}
}
