package cloudinit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// toolImage writes an image with nested directories, a multi-sector
// directory and a large file, for the external readers below.
func toolImage(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	files := append([]File{
		{Path: "user-data", Data: bytes.Repeat([]byte("#cloud-config line\n"), 200000)},
		{Path: "meta-data", Data: []byte("instance-id: vm.ns\n")},
		{Path: "network-config", Data: nil},
		{Path: "openstack/latest/meta_data.json", Data: []byte(`{"uuid":"u"}`)},
	}, manyFiles("many", 60)...)
	img, err := BuildISO(NoCloudLabel, files, time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "test.iso")
	if err := os.WriteFile(f, img, 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for _, file := range files {
		want[file.Path] = file.Data
	}
	return f, want
}

func lookTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found; cross-check skipped (apt-get install genisoimage xorriso p7zip-full)", name)
	}
	return p
}

func sortedKeys(m map[string][]byte) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestISOWithIsoinfo reads the image with isoinfo (genisoimage): volume
// label, Rock Ridge, the file list and each file's content.
func TestISOWithIsoinfo(t *testing.T) {
	isoinfo := lookTool(t, "isoinfo")
	img, want := toolImage(t)
	out, err := exec.Command(isoinfo, "-d", "-i", img).CombinedOutput()
	if err != nil {
		t.Fatalf("isoinfo -d: %v\n%s", err, out)
	}
	for _, line := range []string{"Volume id: cidata", "Rock Ridge signatures version 1 found"} {
		if !strings.Contains(string(out), line) {
			t.Errorf("isoinfo -d does not say %q:\n%s", line, out)
		}
	}
	out, err = exec.Command(isoinfo, "-R", "-f", "-i", img).CombinedOutput()
	if err != nil {
		t.Fatalf("isoinfo -f: %v\n%s", err, out)
	}
	var listed []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if _, isFile := want[strings.TrimPrefix(l, "/")]; isFile {
			listed = append(listed, strings.TrimPrefix(l, "/"))
		}
	}
	sort.Strings(listed)
	if diff := cmp.Diff(sortedKeys(want), listed); diff != "" {
		t.Errorf("isoinfo file list (-want +got):\n%s\n%s", diff, out)
	}
	for _, p := range []string{"user-data", "meta-data", "network-config", "openstack/latest/meta_data.json", "many/file-number-0059.txt"} {
		data, err := exec.Command(isoinfo, "-R", "-x", "/"+p, "-i", img).Output()
		if err != nil {
			t.Fatalf("isoinfo -x %s: %v", p, err)
		}
		if !bytes.Equal(data, want[p]) {
			t.Errorf("isoinfo extracts %d bytes of %s, want %d", len(data), p, len(want[p]))
		}
	}
}

// TestISOWithXorriso extracts the whole image with xorriso (libisofs) and
// compares the tree; xorriso also reports structural problems as SORRY or
// FAILURE messages.
func TestISOWithXorriso(t *testing.T) {
	xorriso := lookTool(t, "xorriso")
	img, want := toolImage(t)
	dir := filepath.Join(t.TempDir(), "x")
	out, err := exec.Command(xorriso, "-abort_on", "SORRY", "-indev", img, "-osirrox", "on", "-extract", "/", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	for _, bad := range []string{"SORRY", "FAILURE", "WARNING"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("xorriso reports %s:\n%s", bad, out)
		}
	}
	compareTree(t, dir, want)
}

// TestISOWith7z extracts the image with 7-Zip's ISO reader.
func TestISOWith7z(t *testing.T) {
	sevenZip := ""
	for _, name := range []string{"7z", "7zz", "7za"} {
		if p, err := exec.LookPath(name); err == nil {
			sevenZip = p
			break
		}
	}
	if sevenZip == "" {
		t.Skip("7z not found; cross-check skipped")
	}
	img, want := toolImage(t)
	dir := filepath.Join(t.TempDir(), "x")
	if out, err := exec.Command(sevenZip, "x", "-o"+dir, img).CombinedOutput(); err != nil {
		t.Fatalf("7z: %v\n%s", err, out)
	}
	compareTree(t, dir, want)
}

// TestISOLabelWithBlkid checks the label as udev/blkid (and so cloud-init's
// datasource discovery) sees it.
func TestISOLabelWithBlkid(t *testing.T) {
	blkid := lookTool(t, "blkid")
	for _, tc := range []struct {
		build func() ([]byte, error)
		want  string
	}{
		{func() ([]byte, error) { return NoCloudISO([]byte("u"), []byte("m"), nil) }, "cidata"},
		{func() ([]byte, error) { return ConfigDriveISO([]byte("u"), []byte("{}"), nil) }, "config-2"},
	} {
		img, err := tc.build()
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "l.iso")
		if err := os.WriteFile(f, img, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(blkid, "-p", "-o", "value", "-s", "LABEL", f).Output()
		if err != nil {
			t.Fatalf("blkid: %v", err)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("blkid label %q, want %q", got, tc.want)
		}
	}
}

// compareTree compares the regular files under dir with want.
func compareTree(t *testing.T, dir string, want map[string][]byte) {
	t.Helper()
	got := map[string][]byte{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		got[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sortedKeys(want), sortedKeys(got)); diff != "" {
		t.Fatalf("extracted files (-want +got):\n%s", diff)
	}
	for p, data := range want {
		if !bytes.Equal(got[p], data) {
			t.Errorf("%s: extracted %d bytes, want %d", p, len(got[p]), len(data))
		}
	}
}
