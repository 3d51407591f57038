// Package enter runs code on an OS thread inside another network namespace. Sockets made there
// stay in that namespace after the thread has come back, which is how the node agent connects
// to a launcher pod's loopback and how tests stand in for a pod's or a node's network.
package enter

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// Do runs f on an OS thread that has entered the network namespace ns (an open
// /proc/<pid>/ns/net or /run/netns/<name>), and returns f's error. f must not start goroutines
// that need the namespace: only its own thread is in it.
func Do(ns *os.File, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		if err := setns(ns); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("entering network namespace %s: %w", ns.Name(), err)
			return
		}
		ferr := f()
		if err := setns(orig); err != nil {
			// The thread stays locked and ends with this goroutine: no other goroutine may
			// run in the wrong namespace.
			errc <- fmt.Errorf("leaving network namespace %s: %w", ns.Name(), err)
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
