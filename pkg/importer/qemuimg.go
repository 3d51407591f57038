package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// imageInfo is what `qemu-img info --output=json` says about an image.
type imageInfo struct {
	Format      string `json:"format"`
	VirtualSize int64  `json:"virtual-size"`
	BackingFile string `json:"backing-filename"`
}

// qemuImg runs qemu-img (Binary, "qemu-img" when empty).
type qemuImg struct{ Binary string }

func (q qemuImg) run(ctx context.Context, args ...string) ([]byte, error) {
	bin := q.Binary
	if bin == "" {
		bin = "qemu-img"
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("qemu-img %s: %s", args[0], msg)
	}
	return stdout.Bytes(), nil
}

// info reads an image's format and virtual size. A file qemu-img cannot read is not an image.
func (q qemuImg) info(ctx context.Context, path string) (imageInfo, error) {
	out, err := q.run(ctx, "info", "--output=json", path)
	if err != nil {
		return imageInfo{}, permanentf("the source is not a disk image qemu-img can read: %v", err)
	}
	var info imageInfo
	if err := json.Unmarshal(out, &info); err != nil {
		return imageInfo{}, fmt.Errorf("qemu-img info: %w", err)
	}
	return info, nil
}

// convert writes src (of format) as a raw image to dest.
func (q qemuImg) convert(ctx context.Context, src, format, dest string, block bool) error {
	args := []string{"convert", "-t", "writeback", "-p", "-f", format, "-O", "raw"}
	if block {
		// The device exists: write into it, do not create it.
		args = append(args, "-n")
	}
	_, err := q.run(ctx, append(args, src, dest)...)
	return err
}

// resize grows the raw image at path to size bytes (sparse).
func (q qemuImg) resize(ctx context.Context, path string, size int64) error {
	_, err := q.run(ctx, "resize", "-f", "raw", path, strconv.FormatInt(size, 10))
	return err
}
