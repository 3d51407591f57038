package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// blockSize is the unit of the sparse copy: a block of zeros is skipped, not written.
const blockSize = 64 << 10

// errFound stops the directory walk at the first regular file.
var errFound = errors.New("found")

// resolveSource returns source when it is a regular file, or the first regular file under it
// (lexical order, depth first) when it is a directory. Symbolic links are followed for source
// itself only.
func resolveSource(source string) (string, error) {
	st, err := os.Stat(source)
	if err != nil {
		return "", err
	}
	if st.Mode().IsRegular() {
		return source, nil
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is neither a regular file nor a directory", source)
	}
	var found string
	err = filepath.WalkDir(source, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			found = path
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return "", fmt.Errorf("looking for a disk image under %s: %w", source, err)
	}
	if found == "" {
		return "", fmt.Errorf("no regular file under %s", source)
	}
	return found, nil
}

// copyStats tells how much was copied.
type copyStats struct {
	// size is the size of the source and of the copy.
	size int64
	// written is what was actually written; the rest are holes.
	written int64
}

// copyFile copies from to dest through a temporary file in dest's directory (created with its
// parents), renamed into place with mode once complete, so a reader never sees a partial image.
// Blocks of zeros become holes.
func copyFile(from, dest string, mode os.FileMode) (copyStats, error) {
	var st copyStats
	in, err := os.Open(from)
	if err != nil {
		return st, err
	}
	defer func() { _ = in.Close() }()
	dir := filepath.Dir(dest)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return st, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".*")
	if err != nil {
		return st, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	st, err = sparseCopy(tmp, in)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	// Not synced: the copy lives in the pod's emptyDir and dies with the pod, so a crash
	// leaves nothing that would be read again, and QEMU (its reads and writes, O_DIRECT or not)
	// sees the page cache. An fsync of the image would only delay the start, and during a
	// burst queue before the etcd servers' own fsyncs on the same disk.
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return st, fmt.Errorf("copying %s to %s: %w", from, dest, err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return st, err
	}
	return st, nil
}

// writeAtomically writes data to path through a temporary file renamed into place: the launcher
// polls for path and must never read it half written (an empty failure message).
func writeAtomically(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// sparseCopy copies r into the empty file w, seeking over blocks of zeros, and sets w's size.
func sparseCopy(w *os.File, r io.Reader) (copyStats, error) {
	var st copyStats
	buf := make([]byte, blockSize)
	zero := make([]byte, blockSize)
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if bytes.Equal(buf[:n], zero[:n]) {
				if _, serr := w.Seek(int64(n), io.SeekCurrent); serr != nil {
					return st, serr
				}
			} else {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return st, werr
				}
				st.written += int64(n)
			}
			st.size += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return st, err
		}
	}
	// A trailing hole has no bytes yet: the size must be set explicitly.
	if err := w.Truncate(st.size); err != nil {
		return st, err
	}
	return st, nil
}
