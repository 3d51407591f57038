package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// The files of a Filesystem claim.
const (
	// DiskImage is the image KubeVirt boots from on a Filesystem claim.
	DiskImage = "disk.img"
	// partSuffix marks the image being written; it becomes DiskImage once complete.
	partSuffix = ".part"
	// sourceSuffix marks a downloaded non-raw image waiting for its conversion.
	sourceSuffix = ".source"
)

// Options say what to import and where.
type Options struct {
	// Exactly one source: HTTP, File (a path in the pod), Reader (an upload's body), or Blank.
	HTTP   *HTTPSource
	File   string
	Reader io.Reader
	Blank  bool
	// ReaderSize is the length of Reader when known (0: unknown), for the progress.
	ReaderSize int64

	// TargetDir is the mount of a Filesystem claim; TargetDevice the device of a Block claim.
	// Exactly one is set.
	TargetDir    string
	TargetDevice string
	// ScratchDir holds a non-raw image of a Block import while it is converted (TargetDir's
	// claim is used for Filesystem imports).
	ScratchDir string
	// ImageSize is the usable size in bytes: the DataVolume's requested size on Filesystem
	// (the image is grown to it), ignored on Block (the device's size). An image bigger than
	// this fails permanently. Blank images need it.
	ImageSize int64

	// QemuImg is the qemu-img binary ("qemu-img" when empty).
	QemuImg string
	// Progress, when set, counts the source's bytes.
	Progress *Progress
}

// Result describes a finished import.
type Result struct {
	// Format is the source's image format (raw, qcow2, iso…), Compression its compressions.
	Format      string   `json:"format"`
	Compression []string `json:"compression,omitempty"`
	// SourceBytes were read from the source; VirtualSize is the image's size.
	SourceBytes int64 `json:"sourceBytes"`
	VirtualSize int64 `json:"virtualSize"`
	// Seconds is how long the import took.
	Seconds float64 `json:"seconds"`
}

// Run imports the image. Errors that retrying cannot fix are PermanentError.
func Run(ctx context.Context, o Options) (Result, error) {
	start := time.Now()
	if o.Progress == nil {
		o.Progress = &Progress{}
	}
	if (o.TargetDir == "") == (o.TargetDevice == "") {
		return Result{}, permanentf("exactly one of a target directory and a target device is needed")
	}
	var (
		res Result
		err error
	)
	if o.Blank {
		res, err = blank(ctx, o)
	} else {
		res, err = imp(ctx, o)
	}
	res.Seconds = time.Since(start).Seconds()
	if err == nil {
		o.Progress.finish()
	}
	return res, err
}

// blank creates an empty raw image of ImageSize (zeroes nothing on Block: CDI's blank Block
// volumes are the device as the storage hands it over).
func blank(ctx context.Context, o Options) (Result, error) {
	res := Result{Format: "raw"}
	if o.TargetDevice != "" {
		size, err := deviceSize(o.TargetDevice)
		res.VirtualSize = size
		return res, err
	}
	if o.ImageSize <= 0 {
		return res, permanentf("a blank image needs its size")
	}
	part := filepath.Join(o.TargetDir, DiskImage+partSuffix)
	f, err := os.Create(part)
	if err != nil {
		return res, err
	}
	if err := f.Truncate(o.ImageSize); err != nil {
		_ = f.Close()
		return res, err
	}
	if err := f.Close(); err != nil {
		return res, err
	}
	res.VirtualSize = o.ImageSize
	return res, publish(o.TargetDir)
}

// imp streams the source, decompressed, either straight into the target (raw) or into a file
// that qemu-img converts (other formats).
func imp(ctx context.Context, o Options) (Result, error) {
	var res Result
	in, total, err := open(ctx, o)
	if err != nil {
		return res, err
	}
	defer func() { _ = in.Close() }()
	o.Progress.setTotal(total)
	r, layers, err := decompress(o.Progress.reader(in))
	if err != nil {
		return res, err
	}
	res.Compression = layers
	br := bufio.NewReaderSize(r, 1<<20)
	head, err := br.Peek(peekSize)
	if err != nil && !errors.Is(err, io.EOF) {
		return res, fmt.Errorf("reading the source: %w", err)
	}
	if len(head) == 0 {
		return res, permanentf("the source is empty%s: not a disk image", describe(layers))
	}
	q := qemuImg{Binary: o.QemuImg}
	if !needsConversion(head) {
		if looksLikeText(head) {
			return res, permanentf("the source%s is text, not a disk image (raw, qcow2 or iso)", describe(layers))
		}
		res.Format = "raw"
		if isISO(br) {
			res.Format = "iso"
		}
		res.VirtualSize, err = writeRaw(ctx, br, o)
		res.SourceBytes = o.Progress.Report().Read
		return res, err
	}
	// A qcow2 (or vmdk, vhdx…): download, check, convert.
	dir := o.TargetDir
	if o.TargetDevice != "" {
		dir = o.ScratchDir
	}
	if dir == "" {
		return res, permanentf("converting a non-raw image to a Block volume needs a scratch directory")
	}
	src := filepath.Join(dir, DiskImage+sourceSuffix)
	defer func() { _ = os.Remove(src) }()
	if _, err := writeFile(ctx, src, br, true); err != nil {
		return res, err
	}
	res.SourceBytes = o.Progress.Report().Read
	info, err := q.info(ctx, src)
	if err != nil {
		return res, err
	}
	res.Format, res.VirtualSize = info.Format, info.VirtualSize
	if info.BackingFile != "" {
		return res, permanentf("the %s image has a backing file (%s): only self-contained images can be imported", info.Format, info.BackingFile)
	}
	limit, err := usable(o)
	if err != nil {
		return res, err
	}
	if limit > 0 && info.VirtualSize > limit {
		return res, tooBig(info.Format, info.VirtualSize, limit)
	}
	if o.TargetDevice != "" {
		return res, q.convert(ctx, src, info.Format, o.TargetDevice, true)
	}
	part := filepath.Join(o.TargetDir, DiskImage+partSuffix)
	if err := q.convert(ctx, src, info.Format, part, false); err != nil {
		return res, err
	}
	if err := os.Remove(src); err != nil {
		return res, err
	}
	if o.ImageSize > info.VirtualSize {
		if err := q.resize(ctx, part, o.ImageSize); err != nil {
			return res, err
		}
	}
	return res, publish(o.TargetDir)
}

// open opens the source.
func open(ctx context.Context, o Options) (io.ReadCloser, int64, error) {
	switch {
	case o.HTTP != nil:
		return openHTTP(ctx, o.HTTP)
	case o.File != "":
		return openFile(o.File)
	case o.Reader != nil:
		return io.NopCloser(o.Reader), o.ReaderSize, nil
	}
	return nil, 0, permanentf("no source to import from")
}

// needsConversion says whether the image's header names a format qemu-img converts (qcow2,
// vmdk, vhdx, vdi, vpc); everything else is raw (an iso is a raw image).
func needsConversion(head []byte) bool {
	for _, magic := range [][]byte{qcow2Magic, []byte("KDMV"), []byte("vhdxfile"), []byte("conectix")} {
		if bytes.HasPrefix(head, magic) {
			return true
		}
	}
	// VDI: its signature at offset 64.
	return len(head) >= 68 && bytes.Equal(head[64:68], []byte{0x7f, 0x10, 0xda, 0xbe})
}

// isISO says whether a raw image is an ISO 9660 filesystem ("CD001" at 32769), peeking as far
// as the buffer allows.
func isISO(br *bufio.Reader) bool {
	head, _ := br.Peek(32774)
	return len(head) >= 32774 && bytes.Equal(head[32769:32774], []byte("CD001"))
}

// writeRaw writes a raw stream to the target and returns its size.
func writeRaw(ctx context.Context, r io.Reader, o Options) (int64, error) {
	limit, err := usable(o)
	if err != nil {
		return 0, err
	}
	if limit > 0 {
		// One byte more than allowed tells that the image does not fit.
		r = io.LimitReader(r, limit+1)
	}
	if o.TargetDevice != "" {
		n, err := writeFile(ctx, o.TargetDevice, r, false)
		if err == nil && limit > 0 && n > limit {
			err = tooBig("raw", n, limit)
		}
		return n, err
	}
	part := filepath.Join(o.TargetDir, DiskImage+partSuffix)
	n, err := writeFile(ctx, part, r, true)
	if err != nil {
		return n, err
	}
	if limit > 0 && n > limit {
		_ = os.Remove(part)
		return n, tooBig("raw", n, limit)
	}
	if o.ImageSize > n {
		if err := os.Truncate(part, o.ImageSize); err != nil {
			return n, err
		}
	}
	return n, publish(o.TargetDir)
}

// usable is the largest image the target holds (0: unknown).
func usable(o Options) (int64, error) {
	if o.TargetDevice != "" {
		return deviceSize(o.TargetDevice)
	}
	return o.ImageSize, nil
}

func tooBig(format string, size, limit int64) error {
	return permanentf("the %s image's virtual size %d bytes (%s) is bigger than the claim's usable %d bytes (%s): "+
		"request a bigger DataVolume", format, size, human(size), limit, human(limit))
}

// human shows a size in binary units.
func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// publish renames disk.img.part to disk.img once it is on disk.
func publish(dir string) error {
	part := filepath.Join(dir, DiskImage+partSuffix)
	f, err := os.Open(part)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(part, filepath.Join(dir, DiskImage)); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
