package agent

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"

	"k8s.io/apimachinery/pkg/types"
)

// Screenshot implements streamserver.GuestQueries: the guest's screen as a PNG image (what KubeVirt's
// vnc/screenshot answers). QEMU dumps the screen as a PPM image, which is converted here.
func (g *guestStreams) Screenshot(_ context.Context, namespace, name string, uid types.UID) ([]byte, error) {
	l, err := g.domains.running(namespace, name, uid)
	if err != nil {
		return nil, err
	}
	mime, data, err := l.conn.Screenshot(l.domain)
	if err != nil {
		return nil, err
	}
	return asPNG(mime, data)
}

// asPNG returns the image as PNG: PNG as it is, a binary PPM (P6, 8 bits) converted.
func asPNG(mime string, data []byte) ([]byte, error) {
	switch mime {
	case "image/png":
		return data, nil
	case "image/x-portable-pixmap":
		img, err := decodePPM(data)
		if err != nil {
			return nil, fmt.Errorf("the screenshot: %w", err)
		}
		var out bytes.Buffer
		if err := png.Encode(&out, img); err != nil {
			return nil, err
		}
		return out.Bytes(), nil
	}
	return nil, fmt.Errorf("the screenshot is %s, neither PNG nor PPM", mime)
}

// decodePPM reads a binary PPM ("P6", width, height, a maximum value up to 255, then RGB
// triples). Comments in the header are not expected: QEMU writes none.
func decodePPM(data []byte) (image.Image, error) {
	r := bufio.NewReader(bytes.NewReader(data))
	var magic string
	var w, h, maxval int
	if _, err := fmt.Fscan(r, &magic, &w, &h, &maxval); err != nil {
		return nil, fmt.Errorf("PPM header: %w", err)
	}
	if magic != "P6" || w <= 0 || h <= 0 || w > 1<<14 || h > 1<<14 || maxval <= 0 || maxval > 255 {
		return nil, fmt.Errorf("unsupported PPM: %s %dx%d max %d", magic, w, h, maxval)
	}
	if _, err := r.ReadByte(); err != nil { // the single whitespace after the header
		return nil, fmt.Errorf("PPM header: %w", err)
	}
	pix := make([]byte, 3*w*h)
	if _, err := io.ReadFull(r, pix); err != nil {
		return nil, fmt.Errorf("PPM pixels (%dx%d): %w", w, h, err)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	scale := func(v byte) uint8 { return uint8(int(v) * 255 / maxval) }
	for i := range w * h {
		img.Set(i%w, i/w, color.RGBA{R: scale(pix[3*i]), G: scale(pix[3*i+1]), B: scale(pix[3*i+2]), A: 255})
	}
	return img, nil
}
