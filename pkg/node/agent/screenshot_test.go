package agent

import (
	"bytes"
	"errors"
	"image/color"
	"image/png"
	"testing"

	"github.com/nativevirt/nativevirt/pkg/node/streamserver"
)

// TestScreenshot: the guest's screen comes back as a PNG with its pixels (the fake libvirt's PPM
// is a red and a blue pixel); a VMI without a domain has none.
func TestScreenshot(t *testing.T) {
	e := newEnv(t)
	e.addVMI(scheduledVMI())
	if _, err := e.agent.guest.Screenshot(t.Context(), ns, vmName, vmUID); !errors.Is(err, streamserver.ErrNotFound) {
		t.Errorf("screenshot before start: err = %v, want ErrNotFound", err)
	}
	e.addLauncher(true)
	e.sync()
	e.sync()
	raw, err := e.agent.guest.Screenshot(t.Context(), ns, vmName, vmUID)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 2 || b.Dy() != 1 {
		t.Fatalf("image %v, want 2x1", b)
	}
	for x, want := range []color.RGBA{{R: 255, A: 255}, {B: 255, A: 255}} {
		if got := color.RGBAModel.Convert(img.At(x, 0)).(color.RGBA); got != want {
			t.Errorf("pixel %d = %v, want %v", x, got, want)
		}
	}
}

func TestDecodePPMRefusesWhatItCannotRead(t *testing.T) {
	for _, bad := range []string{"", "P3\n1 1\n255\n000", "P6\n0 1\n255\n", "P6\n1 1\n65535\n\x00\x00\x00\x00\x00\x00", "P6\n2 2\n255\n\x00\x00\x00"} {
		if _, err := decodePPM([]byte(bad)); err == nil {
			t.Errorf("decodePPM(%q): no error", bad)
		}
	}
	if _, err := asPNG("image/bmp", nil); err == nil {
		t.Error("asPNG of a BMP: no error")
	}
}
