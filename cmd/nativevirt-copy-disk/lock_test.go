package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lockExclusive takes the launcher's side of the lock: an exclusive flock through its own open
// file description (flock locks of two descriptions conflict, also within one process).
func lockExclusive(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// A copy container with --hold stays until the launcher releases its lock, then ends with 0.
func TestHoldEndsWithTheLauncher(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(src, []byte("bootable"), 0o444); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "launcher.lock")
	launcher := lockExclusive(t, lock)
	dest := filepath.Join(dir, "out", "disk.img")
	code := make(chan int, 1)
	go func() { code <- run([]string{"--source", src, "--dest", dest, "--hold", lock}) }()

	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(dest); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no copy after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case c := <-code:
		t.Fatalf("run returned %d while the launcher still held its lock", c)
	case <-time.After(300 * time.Millisecond):
	}
	_ = launcher.Close() // the launcher ends
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("run = %d after the launcher ended, want 0", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run still holding 10 s after the launcher released its lock")
	}
}

// Without a lock file (no launcher ever ran) --hold does not wait.
func TestHoldWithoutLauncher(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(src, []byte("x"), 0o444); err != nil {
		t.Fatal(err)
	}
	if c := run([]string{"--source", src, "--dest", filepath.Join(dir, "copy"), "--hold", filepath.Join(dir, "none.lock")}); c != 0 {
		t.Errorf("run = %d, want 0", c)
	}
}

// A failed copy leaves its error in <dest>.failed, where the launcher finds it.
func TestFailedCopyIsRecorded(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "disk.img")
	if c := run([]string{"--source", filepath.Join(dir, "nope"), "--dest", dest}); c != 1 {
		t.Fatalf("run = %d, want 1", c)
	}
	msg, err := os.ReadFile(dest + failedSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(msg), "nope") {
		t.Errorf("failure marker %q does not name the missing source", msg)
	}
	if _, err := os.Stat(dest); err == nil {
		t.Error("a failed copy left a disk image")
	}
}

// --install copies this very binary, executable, and returns only once the launcher holds its lock.
func TestInstallAwaitsTheLauncher(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "launcher.lock")
	dest := filepath.Join(dir, "bin", "nativevirt-copy-disk")
	taken := make(chan time.Time, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		lockExclusive(t, lock)
		taken <- time.Now()
	}()
	if c := run([]string{"--install", dest, "--await-lock", lock}); c != 0 {
		t.Fatalf("run = %d, want 0", c)
	}
	select {
	case <-taken:
	default:
		t.Fatal("--install returned before the launcher took its lock")
	}
	st, err := os.Stat(dest)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != binaryMode {
		t.Errorf("installed binary mode %v, want %v", st.Mode().Perm(), binaryMode)
	}
	self, _ := os.Executable()
	want, _ := os.ReadFile(self)
	got, _ := os.ReadFile(dest)
	if !bytes.Equal(got, want) {
		t.Error("the installed binary differs from the running one")
	}
}

func TestAwaitHeldTimesOut(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "launcher.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := awaitHeld(lock, 50*time.Millisecond); err == nil {
		t.Error("awaitHeld returned nil although nobody holds the lock")
	}
}
