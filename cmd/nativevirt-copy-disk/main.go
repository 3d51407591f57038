// Command nativevirt-copy-disk copies a disk image out of a container image into the launcher
// pod's `disks` emptyDir. The launcher pod runs it in one container per containerDisk volume
// (and per kernel boot file), inside the volume's image (which may have no shell and no libc),
// beside the launcher, so it is a static, standard-library-only binary: build it with
// CGO_ENABLED=0. It has two roles:
//
//	nativevirt-copy-disk --install /var/run/nativevirt-bin/nativevirt-copy-disk --await-lock /var/run/nativevirt-bin/launcher.lock
//
// is the launcher container's postStart hook: it copies this binary where the copy containers
// run it from, and returns once the launcher holds its lock. The kubelet starts a pod's
// containers one after the other and the next one only after the previous one's postStart hook,
// so the copy containers start after that.
//
//	nativevirt-copy-disk --source /disk --dest /var/run/nativevirt-disks/rootdisk/disk.img --hold /var/run/nativevirt-bin/launcher.lock
//
// copies the image; with --hold it then waits until the launcher has released its lock (it has
// ended), so that the pod ends with its launcher and stays Ready while it runs. A directory
// source means the first regular file found under it (in lexical order, as KubeVirt's
// containerDisks hold a single file under /disk). Runs of zeros are not written, so the copy is
// sparse, and the copy appears at --dest only once it is complete; a failed copy leaves its
// error in <dest>.failed instead, which fails the launcher waiting for it.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Modes of the files this command writes.
const (
	// diskMode: readable by QEMU whatever user it runs as; written only through an overlay.
	diskMode os.FileMode = 0o644
	// binaryMode: the installed copy of this binary, run by the copy containers' users.
	binaryMode os.FileMode = 0o755
)

// awaitLockTimeout bounds how long the postStart hook waits for the launcher to take its lock.
const awaitLockTimeout = time.Minute

// failedSuffix names the marker of a failed copy (launcher.FailedSuffix, not imported: this
// binary links nothing but the standard library).
const failedSuffix = ".failed"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("nativevirt-copy-disk", flag.ContinueOnError)
	source := fs.String("source", "/disk", "disk image file, or a directory holding it")
	dest := fs.String("dest", "", "where the copy goes (its directory is created)")
	hold := fs.String("hold", "", "after the copy, wait until the launcher's lock on this file is released")
	install := fs.String("install", "", "copy this binary here instead (the launcher's postStart hook)")
	awaitLock := fs.String("await-lock", "", "with --install: return once the launcher holds its lock on this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case fs.NArg() > 0, *install == "" && *dest == "", *install != "" && (*dest != "" || *hold != ""):
		fmt.Fprintln(os.Stderr, "nativevirt-copy-disk: usage: nativevirt-copy-disk --source FILE|DIR --dest FILE [--hold LOCK]\n"+
			"       nativevirt-copy-disk --install FILE [--await-lock LOCK]")
		return 2
	case *install != "":
		return installSelf(*install, *awaitLock)
	}
	// SIGTERM (the pod is deleted) ends the copy container at once, also while it holds.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	if code := copyDisk(*source, *dest); code != 0 {
		return code
	}
	if *hold != "" {
		if err := holdUntilReleased(*hold, sigs); err != nil {
			fmt.Fprintf(os.Stderr, "nativevirt-copy-disk: %v\n", err)
			return 1
		}
	}
	return 0
}

// copyDisk copies source (or the first file under it) to dest, or leaves the error in
// dest.failed.
func copyDisk(source, dest string) int {
	start := time.Now()
	from, err := resolveSource(source)
	var st copyStats
	if err == nil {
		st, err = copyFile(from, dest, diskMode)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nativevirt-copy-disk: %v\n", err)
		if werr := writeAtomically(dest+failedSuffix, []byte(err.Error()+"\n"), diskMode); werr != nil {
			fmt.Fprintf(os.Stderr, "nativevirt-copy-disk: recording the failure: %v\n", werr)
		}
		return 1
	}
	fmt.Printf("nativevirt-copy-disk: copied %s to %s: %d bytes (%d written, the rest sparse) in %s\n",
		from, dest, st.size, st.written, time.Since(start).Round(time.Millisecond))
	return 0
}

// installSelf copies the running binary to dest and, with lock, waits until another process
// holds lock.
func installSelf(dest, lock string) int {
	self, err := os.Executable()
	if err == nil {
		_, err = copyFile(self, dest, binaryMode)
	}
	if err == nil && lock != "" {
		err = awaitHeld(lock, awaitLockTimeout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nativevirt-copy-disk: %v\n", err)
		return 1
	}
	return 0
}
