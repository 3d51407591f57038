package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// The launcher keeps an exclusive flock on a lock file for as long as it runs; the kernel
// releases it however the launcher ends. These are the two waits on that lock.

// lockPoll is how often awaitHeld tries the lock.
const lockPoll = 5 * time.Millisecond

// awaitHeld returns once another process holds lock (a shared lock on it is refused), or an
// error after timeout.
func awaitHeld(lock string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		held, err := heldElsewhere(lock)
		if err != nil {
			return err
		}
		if held {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nobody took the lock %s within %s", lock, timeout)
		}
		time.Sleep(lockPoll)
	}
}

// heldElsewhere tells whether another process holds an exclusive lock on lock; a missing file
// is not held.
func heldElsewhere(lock string) (bool, error) {
	f, err := os.Open(lock)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("the lock %s: %w", lock, err)
	}
	// Ours for a moment: nobody else holds it. Closing the file releases it.
	return false, nil
}

// holdUntilReleased waits for a shared lock on lock, which it gets once the launcher's
// exclusive lock is released, or for a signal. A missing lock file means no launcher to wait for.
func holdUntilReleased(lock string, sigs <-chan os.Signal) error {
	f, err := os.Open(lock)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	got := make(chan error, 1)
	go func() { got <- syscall.Flock(int(f.Fd()), syscall.LOCK_SH) }()
	select {
	case err := <-got:
		if err != nil {
			return fmt.Errorf("the lock %s: %w", lock, err)
		}
		return nil
	case <-sigs:
		return nil
	}
}
