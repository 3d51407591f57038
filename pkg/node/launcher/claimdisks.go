package launcher

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// ClaimDiskImage is the guest's disk image on a filesystem-mode claim, as KubeVirt names it.
const ClaimDiskImage = "disk.img"

// claimSpaceToleration is the share of a claim's capacity that may be missing on its
// filesystem (file system overhead): the image is then made as large as the space allows.
// KubeVirt tolerates 10% as well.
const claimSpaceToleration = 0.10

// ClaimDisks maps a filesystem-mode claim volume to the size of the disk image to create on it
// when it has none: the claim's capacity. It is a flag.Value: --claim-disk=<volume>=<bytes>.
type ClaimDisks map[string]int64

// String implements flag.Value.
func (c ClaimDisks) String() string {
	names := make([]string, 0, len(c))
	for n := range c {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, n+"="+strconv.FormatInt(c[n], 10))
	}
	return strings.Join(parts, ",")
}

// Set implements flag.Value.
func (c ClaimDisks) Set(v string) error {
	name, size, ok := strings.Cut(v, "=")
	if !ok || name == "" || strings.ContainsRune(name, '/') {
		return fmt.Errorf("want <volume>=<bytes>, got %q", v)
	}
	n, err := strconv.ParseInt(size, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("size of claim disk %s must be a positive number of bytes, got %q", name, size)
	}
	c[name] = n
	return nil
}

// createClaimDisks creates <dir>/<volume>/disk.img, sparse, for every claim that has none: the
// disk image of a fresh filesystem-mode claim. An existing image is never touched.
func createClaimDisks(dir string, disks ClaimDisks) error {
	var errs []error
	for name, capacity := range disks {
		if err := createClaimDisk(filepath.Join(dir, name), capacity); err != nil {
			errs = append(errs, fmt.Errorf("claim volume %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func createClaimDisk(mount string, capacity int64) error {
	image := filepath.Join(mount, ClaimDiskImage)
	if _, err := os.Stat(image); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(mount, &st); err != nil {
		return fmt.Errorf("the claim is not mounted at %s: %w", mount, err)
	}
	size, err := claimImageSize(capacity, int64(st.Bavail)*st.Bsize)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(image, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o660)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		_ = f.Close()
		_ = os.Remove(image)
		return err
	}
	return f.Close()
}

// claimImageSize is the capacity, or the available space (in whole MiB) when that is smaller
// but within the toleration.
func claimImageSize(capacity, available int64) (int64, error) {
	if available >= capacity {
		return capacity, nil
	}
	if float64(available) < float64(capacity)*(1-claimSpaceToleration) {
		return 0, fmt.Errorf("%d bytes available, the claim asks for %d (at most %.0f%% less is tolerated)",
			available, capacity, claimSpaceToleration*100)
	}
	return available &^ (1<<20 - 1), nil
}
