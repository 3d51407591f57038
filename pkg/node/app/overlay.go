package app

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// QEMUImg is the qemu-img binary (the node agent's image shares the
// launcher's Debian rootfs, which has qemu-utils).
var QEMUImg = "qemu-img"

// CreateOverlay is the agent's Config.CreateOverlay on qemu-img: a qcow2
// image of the backing image's size, whose backing file is recorded by its
// base name, i.e. relative to the overlay (both live in the same directory of
// the launcher pod's disks volume, whose path differs between the node and
// the pod).
func CreateOverlay(overlay, backing, backingFormat string) error {
	if filepath.Dir(overlay) != filepath.Dir(backing) {
		return fmt.Errorf("overlay %s and backing image %s must be in the same directory", overlay, backing)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, QEMUImg, "create", "-q", "-f", "qcow2",
		"-F", backingFormat, "-b", filepath.Base(backing), overlay).CombinedOutput()
	if err != nil {
		return fmt.Errorf("qemu-img create %s: %w: %s", overlay, err, strings.TrimSpace(string(out)))
	}
	return nil
}
