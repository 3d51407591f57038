package qemucaps

import (
	"fmt"
	"os"
	"path/filepath"
)

// Publish copies the *.xml cache files of libvirt's capability cache into dir, the node's
// directory of one kind (each written aside and renamed, so that a reader never sees half a
// file), removes the other files there and returns the names of the files published.
func Publish(cache, dir string) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(cache, "*.xml"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("libvirt wrote no capability cache in %s", cache)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	var files []string
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		base := filepath.Base(name)
		if err := writeFileAtomic(filepath.Join(dir, base), data, 0o644); err != nil {
			return nil, err
		}
		keep[base] = true
		files = append(files, base)
	}
	old, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range old {
		if !keep[e.Name()] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// writeFileAtomic replaces path with data through a temporary file in the same directory.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
