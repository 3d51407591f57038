package importer

import (
	"context"
	"fmt"
	"io"
	"os"
)

// chunk is the unit of writing; a chunk of zeros becomes a hole in a file.
const chunk = 1 << 20

// writeFile copies r to path and returns the bytes copied. create makes (or truncates) a
// regular file written sparsely; otherwise path (a device) is opened for writing as it is and
// every byte is written, since its old content is not zero.
func writeFile(ctx context.Context, path string, r io.Reader, create bool) (int64, error) {
	flags := os.O_WRONLY
	if create {
		flags |= os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o660)
	if err != nil {
		return 0, err
	}
	n, err := copySparse(ctx, f, r, create)
	if err == nil && create {
		// A trailing hole needs the size set explicitly.
		err = f.Truncate(n)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("writing %s: %w", path, err)
	}
	return n, nil
}

// copySparse copies r to f; with sparse, chunks of zeros are skipped (seeked over).
func copySparse(ctx context.Context, f *os.File, r io.Reader, sparse bool) (int64, error) {
	buf := make([]byte, chunk)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		m, err := fill(r, buf)
		if m > 0 {
			if sparse && allZero(buf[:m]) {
				if _, serr := f.Seek(int64(m), io.SeekCurrent); serr != nil {
					return n, serr
				}
			} else if _, werr := f.Write(buf[:m]); werr != nil {
				return n, werr
			}
			n += int64(m)
		}
		switch {
		case err == io.EOF:
			return n, nil
		case err != nil:
			return n, fmt.Errorf("reading the source: %w", err)
		}
	}
}

// fill reads into buf until it is full or r ends; only a clean end is io.EOF (a truncated
// download is an error, never the end of the image).
func fill(r io.Reader, buf []byte) (int, error) {
	m := 0
	for m < len(buf) {
		k, err := r.Read(buf[m:])
		m += k
		if err != nil {
			return m, err
		}
	}
	return m, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// deviceSize is the size of a block device (or of any file), by seeking to its end.
func deviceSize(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	return f.Seek(0, io.SeekEnd)
}
