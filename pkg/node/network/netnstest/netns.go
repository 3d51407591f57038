// Package netnstest runs code of a test inside a named network namespace (`ip netns add NAME`):
// sockets made there stay there, which is how the tests stand in for a pod's or a node's network.
package netnstest

import (
	"os"
	"runtime"
	"syscall"
)

// Run runs f on an OS thread in the namespace /run/netns/<name> and returns f's error.
func Run(name string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			errc <- err
			return
		}
		defer orig.Close()
		target, err := os.Open("/run/netns/" + name)
		if err != nil {
			errc <- err
			return
		}
		defer target.Close()
		if err := setns(target); err != nil {
			errc <- err
			return
		}
		ferr := f()
		if err := setns(orig); err != nil {
			errc <- err // the thread stays locked and ends with the goroutine
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

func setns(f *os.File) error {
	if _, _, e := syscall.RawSyscall(sysSetns, f.Fd(), syscall.CLONE_NEWNET, 0); e != 0 {
		return e
	}
	return nil
}
