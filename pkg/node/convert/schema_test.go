package convert

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGoldenFilesMatchLibvirtSchema checks every golden file against
// libvirt's own domain schema with virt-xml-validate (Debian package
// libvirt-clients, which needs xmllint from libxml2-utils). The machine may
// not have it; the test then skips and says so.
func TestGoldenFilesMatchLibvirtSchema(t *testing.T) {
	validator, err := exec.LookPath("virt-xml-validate")
	if err != nil {
		t.Skip("virt-xml-validate not found (apt-get install libvirt-clients libxml2-utils); libvirt schema check skipped")
	}
	if _, err := exec.LookPath("xmllint"); err != nil {
		t.Skip("xmllint not found (apt-get install libxml2-utils); libvirt schema check skipped")
	}
	files, err := filepath.Glob("testdata/*.xml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, err := exec.Command(validator, f, "domain").CombinedOutput()
			if err != nil {
				t.Errorf("%s does not match libvirt's domain schema: %v\n%s", f, err, out)
			}
		})
	}
}

// TestSchemaCheckCanFail makes sure the schema check above rejects a broken
// domain, so that a passing check means something.
func TestSchemaCheckCanFail(t *testing.T) {
	validator, err := exec.LookPath("virt-xml-validate")
	if err != nil {
		t.Skip("virt-xml-validate not found; skipped")
	}
	if _, err := exec.LookPath("xmllint"); err != nil {
		t.Skip("xmllint not found; skipped")
	}
	d, err := Convert(minimalVMI(), Context{})
	if err != nil {
		t.Fatal(err)
	}
	d.Devices.Disks = []Disk{{Type: "file", Device: "floppy-tape"}}
	data, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "bad.xml")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(validator, f, "domain").CombinedOutput(); err == nil {
		t.Errorf("a disk of device floppy-tape passed libvirt's schema:\n%s", out)
	}
}
