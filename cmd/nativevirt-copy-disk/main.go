// Command nativevirt-copy-disk copies a disk image out of a container image into the launcher
// pod's `disks` emptyDir. The launcher pod runs it in one init container per containerDisk
// volume, inside the volume's image (which may have no shell and no libc), so it is a static,
// standard-library-only binary: build it with CGO_ENABLED=0.
//
//	nativevirt-copy-disk --source /disk --dest /var/run/nativevirt-disks/rootdisk/disk.img
//
// A directory source means the first regular file found under it (in lexical order, as
// KubeVirt's containerDisks hold a single file under /disk). Runs of zeros are not written, so
// the copy is sparse, and the copy appears at --dest only once it is complete.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("nativevirt-copy-disk", flag.ContinueOnError)
	source := fs.String("source", "/disk", "disk image file, or a directory holding it")
	dest := fs.String("dest", "", "where the copy goes (its directory is created)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dest == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "nativevirt-copy-disk: usage: nativevirt-copy-disk --source FILE|DIR --dest FILE")
		return 2
	}
	start := time.Now()
	from, err := resolveSource(*source)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nativevirt-copy-disk: %v\n", err)
		return 1
	}
	st, err := copyFile(from, *dest)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nativevirt-copy-disk: %v\n", err)
		return 1
	}
	fmt.Printf("nativevirt-copy-disk: copied %s to %s: %d bytes (%d written, the rest sparse) in %s\n",
		from, *dest, st.size, st.written, time.Since(start).Round(time.Millisecond))
	return 0
}
