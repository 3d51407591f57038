package launcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/cloudinit"
)

// ConfigDisks maps a config volume (configMap, secret, serviceAccount, downwardAPI) mounted
// under Options.ConfigVolumesDir to the label of the disk the launcher builds from its files
// (pkg/launcherpod/configvolumes.go). It is a flag.Value: --config-disk=<volume>=<label>.
type ConfigDisks map[string]string

// String implements flag.Value.
func (c ConfigDisks) String() string {
	parts := make([]string, 0, len(c))
	for n, label := range c {
		parts = append(parts, n+"="+label)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Set implements flag.Value.
func (c ConfigDisks) Set(v string) error {
	name, label, ok := strings.Cut(v, "=")
	if !ok || name == "" || label == "" || strings.ContainsRune(name, '/') {
		return fmt.Errorf("want <volume>=<label>, got %q", v)
	}
	c[name] = label
	return nil
}

// kubeletDataDir is the kubelet's link to the current content of a configMap, secret,
// projected or downwardAPI volume; the names at the volume's top are links into it.
const kubeletDataDir = "..data"

// createConfigDisks builds <disksDir>/<volume>/config.iso from the files of every config volume
// mounted at <volumesDir>/<volume>, replacing an older one (the content is that of this start).
func createConfigDisks(volumesDir, disksDir string, disks ConfigDisks) error {
	var errs []error
	for name, label := range disks {
		files, err := readConfigVolume(filepath.Join(volumesDir, name))
		if err == nil && label == launcherpod.SysprepDiskLabel {
			err = requireAutounattend(files)
		}
		if err == nil {
			err = writeConfigDisk(filepath.Join(disksDir, name), label, files)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("config volume %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// readConfigVolume reads the files of a volume the kubelet wrote: the content behind ..data
// when it is there (one consistent version), else the directory itself; names starting with ".."
// are the kubelet's own. Links are not followed below the top.
func readConfigVolume(dir string) ([]cloudinit.File, error) {
	root := dir
	if target, err := filepath.EvalSymlinks(filepath.Join(dir, kubeletDataDir)); err == nil {
		root = target
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var files []cloudinit.File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), "..") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // directories are made as the paths need them; links are skipped
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, cloudinit.File{Path: filepath.ToSlash(rel), Data: data})
		return nil
	})
	return files, err
}

// requireAutounattend refuses a sysprep volume without autounattend.xml (any case), as KubeVirt
// does: Windows setup looks for that file.
func requireAutounattend(files []cloudinit.File) error {
	names := make([]string, 0, len(files))
	for _, f := range files {
		if strings.EqualFold(f.Path, "autounattend.xml") {
			return nil
		}
		names = append(names, f.Path)
	}
	return fmt.Errorf("a sysprep volume must hold autounattend.xml; it holds %v", names)
}

// writeConfigDisk writes the ISO of files, labelled label, as dir/config.iso.
func writeConfigDisk(dir, label string, files []cloudinit.File) error {
	iso, err := cloudinit.BuildISO(label, files, time.Time{})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writeFileAtomic(path.Join(dir, launcherpod.ConfigDiskFile), iso, 0o644)
}
