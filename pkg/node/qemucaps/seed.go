package qemucaps

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Outcomes of a seeding, as Seeded.Outcome reports them.
const (
	// OutcomeNodeCache: libvirt kept the node's capabilities (no probe).
	OutcomeNodeCache = "node cache"
	// OutcomeProbed: libvirt replaced them with its own probe's (they did not match).
	OutcomeProbed = "probed"
	// OutcomeNone: the node has no capabilities of this kind, or the container already had its
	// own; libvirt did what it does without seeding.
	OutcomeNone = "none"
)

// Seeder copies the node's capability files into launcher containers.
type Seeder struct {
	// Dir is the node's capability directory: one subdirectory per kind
	// (KindKVM, KindTCG) of *.xml files.
	Dir string
}

// cacheDir is libvirt's capability cache relative to the container's root.
var cacheDir = strings.TrimPrefix(CacheDir, "/")

// Seeded is the result of one seeding; Close releases it.
type Seeded struct {
	// Kind is the kind of capabilities the container needed.
	Kind string
	// Files are the cache files written (base names); none when nothing was written.
	Files []string
	root  *os.Root
	// inodes are Files' inode numbers as written, in the same order.
	inodes []uint64
}

// Seed writes the node's capability files of the right kind into the root filesystem of the
// process pid (the launcher's libvirtd): the KVM kind when /dev/kvm is a character device in
// that container, the TCG kind otherwise. Files the container has already are left alone (a
// second define in the same pod, or an agent restart).
func (s Seeder) Seed(pid int) (*Seeded, error) {
	return s.SeedRoot(fmt.Sprintf("/proc/%d/root", pid))
}

// SeedRoot is Seed for the container whose root filesystem is at dir.
func (s Seeder) SeedRoot(dir string) (*Seeded, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the launcher container's root filesystem: %w", err)
	}
	sd := &Seeded{Kind: kind(root), root: root}
	if err := s.seed(sd); err != nil {
		_ = root.Close()
		return nil, err
	}
	return sd, nil
}

// kind is the capabilities kind a container needs: KVM when /dev/kvm is a device there.
func kind(root *os.Root) string {
	if fi, err := root.Stat("dev/kvm"); err == nil && fi.Mode()&fs.ModeCharDevice != 0 {
		return KindKVM
	}
	return KindTCG
}

func (s Seeder) seed(sd *Seeded) error {
	src := filepath.Join(s.Dir, sd.Kind)
	names, err := filepath.Glob(filepath.Join(src, "*.xml"))
	if err != nil || len(names) == 0 {
		return nil // no probe of this kind on the node
	}
	if err := sd.root.MkdirAll(cacheDir, 0o755); err != nil {
		return fmt.Errorf("creating %s in the launcher container: %w", CacheDir, err)
	}
	for _, name := range names {
		base := filepath.Base(name)
		target := path.Join(cacheDir, base)
		if _, err := sd.root.Lstat(target); err == nil {
			continue // the container has its own
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("reading the node's QEMU capabilities: %w", err)
		}
		// Written next to the target and renamed: libvirt never reads half a file.
		tmp := target + ".nativevirt-tmp"
		if err := sd.root.WriteFile(tmp, data, 0o600); err != nil {
			return fmt.Errorf("writing QEMU capabilities into the launcher container: %w", err)
		}
		if err := sd.root.Rename(tmp, target); err != nil {
			_ = sd.root.Remove(tmp)
			return fmt.Errorf("writing QEMU capabilities into the launcher container: %w", err)
		}
		ino, err := inode(sd.root, target)
		if err != nil {
			return err
		}
		sd.Files = append(sd.Files, base)
		sd.inodes = append(sd.inodes, ino)
	}
	return nil
}

// Outcome says, after libvirt used its capabilities, whether it kept the seeded files
// (OutcomeNodeCache) or replaced any of them with its own probe's (OutcomeProbed): libvirt
// rewrites a cache file by renaming a new one over it.
func (sd *Seeded) Outcome() string {
	if len(sd.Files) == 0 {
		return OutcomeNone
	}
	for i, base := range sd.Files {
		ino, err := inode(sd.root, path.Join(cacheDir, base))
		if err != nil || ino != sd.inodes[i] {
			return OutcomeProbed
		}
	}
	return OutcomeNodeCache
}

// Close releases the container's root filesystem.
func (sd *Seeded) Close() error { return sd.root.Close() }

func inode(root *os.Root, name string) (uint64, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, errors.New("no inode number in the file's status")
	}
	return st.Ino, nil
}
