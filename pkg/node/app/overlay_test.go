package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateOverlay(t *testing.T) {
	if _, err := exec.LookPath(QEMUImg); err != nil {
		t.Skip("qemu-img not installed (hack/deps/node.list)")
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(base, make([]byte, 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay := filepath.Join(dir, "overlay.qcow2")
	if err := CreateOverlay(overlay, base, "raw"); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(QEMUImg, "info", "--output=json", overlay).CombinedOutput()
	if err != nil {
		t.Fatalf("qemu-img info: %v: %s", err, out)
	}
	for _, want := range []string{`"format": "qcow2"`, `"backing-filename": "disk.img"`, `"backing-filename-format": "raw"`, `"virtual-size": 3145728`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("overlay info lacks %s:\n%s", want, out)
		}
	}
	if err := CreateOverlay(filepath.Join(dir, "sub", "o.qcow2"), base, "raw"); err == nil {
		t.Error("an overlay in another directory than its backing image: want an error")
	}
}
