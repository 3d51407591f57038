package importer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/ulikunitz/xz"
)

// Magic numbers of the compressions and formats the importer recognises by content, not by the
// name of the URL (which often says nothing).
var (
	gzipMagic  = []byte{0x1f, 0x8b}
	xzMagic    = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	qcow2Magic = []byte{'Q', 'F', 'I', 0xfb}
)

// peekSize is how much of a stream the sniffers look at.
const peekSize = 4096

// decompress returns the decompressed content of r (gz or xz, also nested), or r itself, and
// the compressions it removed, outermost first.
func decompress(r io.Reader) (io.Reader, []string, error) {
	var layers []string
	br := bufio.NewReaderSize(r, 1<<20)
	for range 3 {
		head, err := br.Peek(len(xzMagic))
		if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
			return nil, layers, err
		}
		switch {
		case bytes.HasPrefix(head, gzipMagic):
			zr, err := gzip.NewReader(br)
			if err != nil {
				return nil, layers, permanentf("the gzip stream is broken: %v", err)
			}
			layers = append(layers, "gz")
			br = bufio.NewReaderSize(zr, 1<<20)
		case bytes.HasPrefix(head, xzMagic):
			zr, err := xz.NewReader(br)
			if err != nil {
				return nil, layers, permanentf("the xz stream is broken: %v", err)
			}
			layers = append(layers, "xz")
			br = bufio.NewReaderSize(zr, 1<<20)
		default:
			return br, layers, nil
		}
	}
	return br, layers, nil
}

// looksLikeText says whether the start of a file is text (an HTML error page, a README, a
// checksum list) rather than a disk: valid UTF-8 without NUL bytes or control characters other
// than whitespace. A disk starts with a boot sector, a partition table, a header or zeros.
func looksLikeText(head []byte) bool {
	if len(head) == 0 {
		return false
	}
	if len(head) > peekSize {
		head = head[:peekSize]
	}
	// Cut a character split at the end of the sample.
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	if !utf8.Valid(head) {
		return false
	}
	for _, b := range head {
		if b < 0x20 && b != '\n' && b != '\r' && b != '\t' && b != '\f' {
			return false
		}
	}
	return true
}

// describe names the compressions for messages ("" when none).
func describe(layers []string) string {
	if len(layers) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%v compressed)", layers)
}
