package virt

import (
	"errors"
	"fmt"
	"io"

	"libvirt.org/go/libvirt"
)

// maxScreenshot bounds a screenshot's bytes (a 4K display as a PPM is 25 MB).
const maxScreenshot = 64 << 20

// Screenshot implements Inspector: the first screen, as QEMU dumps it (a PPM image).
func (c inspectorConn) Screenshot(name string) (string, []byte, error) {
	var mime string
	var data []byte
	err := c.withDomain(name, func(d *libvirt.Domain) error {
		s, err := c.conn.NewStream(0)
		if err != nil {
			return fmt.Errorf("screenshot of %s: %w", name, err)
		}
		defer func() { _ = s.Free() }()
		if mime, err = d.Screenshot(s, 0, 0); err != nil {
			_ = s.Abort()
			return wrap(name, "taking a screenshot of", err)
		}
		if data, err = readStream(s); err != nil {
			_ = s.Abort()
			return fmt.Errorf("screenshot of %s: %w", name, err)
		}
		return s.Finish()
	})
	return mime, data, err
}

// readStream reads a blocking stream to its end.
func readStream(s *libvirt.Stream) ([]byte, error) {
	var data []byte
	buf := make([]byte, 256<<10)
	for {
		n, err := s.Recv(buf)
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data)+n > maxScreenshot {
			return nil, errors.New("more than 64 MiB")
		}
		data = append(data, buf[:n]...)
	}
}
