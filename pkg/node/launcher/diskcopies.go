package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// The launcher pod copies containerDisk images (and kernel boot files) into the disks volume in
// containers that run beside the launcher, not before it (see pkg/launcherpod): the launcher
// starts its daemons while they copy, and reports ready only once every copy is in place. Each
// copy container then waits for the launcher's lock (HoldLock) and ends when the launcher ends,
// so that the pod ends with it.

// awaitPoll is how often the launcher looks for the copies.
const awaitPoll = 20 * time.Millisecond

// FailedSuffix marks a copy that failed: nativevirt-copy-disk writes its error into
// <dest>.failed instead of the copy.
const FailedSuffix = ".failed"

// holdLock takes an exclusive lock on path (created when missing) and keeps it as long as the
// returned file is open, or the process lives: the kernel releases it however the process ends.
func holdLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("the launcher lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("the launcher lock %s: %w", path, err)
	}
	return f, nil
}

// errCopyFailed wraps the error a copy container reported.
var errCopyFailed = errors.New("copying a disk failed")

// awaitFiles waits until every one of files exists. It returns an error wrapping
// errCopyFailed as soon as one has a <file>.failed marker, libvirtd's exit when it exits first,
// and nil when ctx is cancelled first (done reports whether all were found).
func awaitFiles(ctx context.Context, files []string, libvirtd *child) (done bool, err error) {
	pending := append([]string(nil), files...)
	for {
		left := pending[:0]
		for _, f := range pending {
			if msg, err := os.ReadFile(f + FailedSuffix); err == nil {
				return false, fmt.Errorf("%w: %s: %s", errCopyFailed, f, strings.TrimSpace(string(msg)))
			}
			if _, err := os.Stat(f); err != nil {
				left = append(left, f)
			}
		}
		pending = left
		if len(pending) == 0 {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-libvirtd.done:
			return false, libvirtdExited(libvirtd)
		case <-time.After(awaitPoll):
		}
	}
}
