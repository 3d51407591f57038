package cloudinit

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// manyFiles makes n small files in dir (enough of them spill a directory
// over several sectors).
func manyFiles(dir string, n int) []File {
	var files []File
	for i := 0; i < n; i++ {
		files = append(files, File{Path: fmt.Sprintf("%s/file-number-%04d.txt", dir, i), Data: []byte(fmt.Sprintf("content %d\n", i))})
	}
	return files
}

func TestBuildISORoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16+7) // 3 MiB and a bit: no 2 KB cap
	tests := []struct {
		name     string
		volumeID string
		files    []File
		wantDirs []string
	}{{
		name:     "NoCloud layout",
		volumeID: "cidata",
		files: []File{
			{Path: "user-data", Data: []byte("#cloud-config\n")},
			{Path: "meta-data", Data: []byte("instance-id: a.b\n")},
			{Path: "network-config", Data: []byte("version: 2\n")},
		},
		wantDirs: []string{""},
	}, {
		name:     "ConfigDrive layout with nested directories",
		volumeID: "config-2",
		files: []File{
			{Path: "openstack/latest/meta_data.json", Data: []byte(`{"uuid":"x"}`)},
			{Path: "openstack/latest/user_data", Data: []byte("#!/bin/sh\n")},
			{Path: "openstack/2012-08-10/user_data", Data: []byte("old")},
			{Path: "ec2/latest/meta-data.json", Data: []byte("{}")},
		},
		wantDirs: []string{"", "ec2", "openstack", "ec2/latest", "openstack/2012-08-10", "openstack/latest"},
	}, {
		name:     "large file, empty file",
		volumeID: "cidata",
		files: []File{
			{Path: "user-data", Data: big},
			{Path: "meta-data", Data: nil},
			{Path: "vendor-data", Data: []byte("x")},
		},
		wantDirs: []string{""},
	}, {
		name:     "directory over several sectors",
		volumeID: "MANY",
		files:    append(manyFiles("d", 120), File{Path: "top", Data: []byte("t")}),
		wantDirs: []string{"", "d"},
	}, {
		name:     "names whose ISO identifiers collide or are long",
		volumeID: "Names With Spaces",
		files: []File{
			{Path: "a-b", Data: []byte("1")},
			{Path: "a_b", Data: []byte("2")},
			{Path: "A.B", Data: []byte("3")},
			{Path: "a.b", Data: []byte("4")},
			{Path: strings.Repeat("long-name-", 10) + ".conf", Data: []byte("5")},
			{Path: strings.Repeat("long-name-", 10) + ".config", Data: []byte("6")},
			{Path: strings.Repeat("dir-", 12) + "/x", Data: []byte("7")},
			{Path: strings.Repeat("dir-", 12) + "y/x", Data: []byte("8")},
			{Path: "ünïcode-名前", Data: []byte("9")},
		},
		wantDirs: []string{"", strings.Repeat("dir-", 12), strings.Repeat("dir-", 12) + "y"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img, err := BuildISO(tc.volumeID, tc.files, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			im, err := readISO(img)
			if err != nil {
				t.Fatalf("reading the image back: %v", err)
			}
			if im.volumeID != tc.volumeID {
				t.Errorf("volume id %q, want %q", im.volumeID, tc.volumeID)
			}
			want := map[string][]byte{}
			for _, f := range tc.files {
				want[f.Path] = f.Data
			}
			if diff := cmp.Diff(want, im.files, cmp.Comparer(bytes.Equal)); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDirs, im.dirs); diff != "" {
				t.Errorf("directories (-want +got):\n%s", diff)
			}
			seen := map[string]string{}
			for p, id := range im.isoNames {
				dir := p[:max(strings.LastIndexByte(p, '/'), 0)]
				if other, dup := seen[dir+"/"+id]; dup {
					t.Errorf("%q and %q share the ISO identifier %q", p, other, id)
				}
				seen[dir+"/"+id] = p
				if !validISOIdentifier(id) {
					t.Errorf("%q has the ISO identifier %q, not d-characters of level 2", p, id)
				}
			}
			for p, mode := range im.modes {
				_, isFile := want[p]
				if isFile && mode != modeFile || !isFile && mode != modeDir {
					t.Errorf("%q has mode %o", p, mode)
				}
			}
		})
	}
}

// validISOIdentifier checks a level-2 identifier: NAME (directories) or
// NAME.EXT;1 (files), d-characters, at most 31 characters besides the version.
func validISOIdentifier(id string) bool {
	name := strings.TrimSuffix(id, ";1")
	if len(name) > 31 || (name != id && strings.Count(name, ".") != 1) {
		return false
	}
	for _, r := range strings.Replace(name, ".", "", 1) {
		if !('A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

func TestBuildISODeterministic(t *testing.T) {
	files := []File{{Path: "b/x", Data: []byte("1")}, {Path: "a", Data: []byte("2")}}
	first, err := BuildISO("v", files, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	reordered := []File{files[1], files[0]}
	second, err := BuildISO("v", reordered, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Error("the same files in another order give another image")
	}
	later, err := BuildISO("v", files, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first, later) {
		t.Error("the modification time does not show in the image")
	}
}

func TestBuildISOErrors(t *testing.T) {
	defer func(old uint64) { maxImageSize = old }(maxImageSize)
	maxImageSize = (64 + padSectors) * sectorSize
	tests := []struct {
		name     string
		volumeID string
		files    []File
		modTime  time.Time
		wantErr  string
	}{
		{name: "empty label", volumeID: "", wantErr: "volume identifier"},
		{name: "long label", volumeID: strings.Repeat("x", 33), wantErr: "volume identifier"},
		{name: "non-ASCII label", volumeID: "cïdata", wantErr: "printable ASCII"},
		{name: "absolute path", volumeID: "v", files: []File{{Path: "/user-data"}}, wantErr: "clean relative path"},
		{name: "empty path", volumeID: "v", files: []File{{Path: ""}}, wantErr: "clean relative path"},
		{name: "dot dot", volumeID: "v", files: []File{{Path: "../x"}}, wantErr: "bad component"},
		{name: "unclean path", volumeID: "v", files: []File{{Path: "a//b"}}, wantErr: "clean relative path"},
		{name: "control character", volumeID: "v", files: []File{{Path: "a\nb"}}, wantErr: "control character"},
		{name: "long component", volumeID: "v", files: []File{{Path: strings.Repeat("n", 121)}}, wantErr: "bad component"},
		{name: "too deep", volumeID: "v", files: []File{{Path: "1/2/3/4/5/6/7/8/9"}}, wantErr: "deeper than 8"},
		{name: "duplicate", volumeID: "v", files: []File{{Path: "a"}, {Path: "a"}}, wantErr: "given twice"},
		{name: "file then directory", volumeID: "v", files: []File{{Path: "a"}, {Path: "a/b"}}, wantErr: "it is a file"},
		{name: "directory then file", volumeID: "v", files: []File{{Path: "a/b"}, {Path: "a"}}, wantErr: "also a directory"},
		{name: "file over the cap", volumeID: "v", files: []File{{Path: "a", Data: make([]byte, (64+padSectors)*sectorSize+1)}}, wantErr: "over the"},
		{name: "image over the cap", volumeID: "v", files: []File{{Path: "a", Data: make([]byte, 60*sectorSize)}}, wantErr: "byte cap"},
		{name: "time out of range", volumeID: "v", modTime: time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC), wantErr: "years 1900 to 2155"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildISO(tc.volumeID, tc.files, tc.modTime)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	if _, err := BuildISO("v", []File{{Path: "a", Data: make([]byte, 40*sectorSize)}}, time.Time{}); err != nil {
		t.Errorf("an image just under the cap: %v", err)
	}
}

func TestISOIdentifier(t *testing.T) {
	tests := []struct {
		name string
		dir  bool
		want string
	}{
		{"user-data", false, "USER_DATA.;1"},
		{"meta_data.json", false, "META_DATA.JSO;1"},
		{"network-config", false, "NETWORK_CONFIG.;1"},
		{"openstack", true, "OPENSTACK"},
		{"2012-08-10", true, "2012_08_10"},
		{".hidden", false, "_HIDDEN.;1"},
		{strings.Repeat("a", 40), true, strings.Repeat("A", 31)},
		{strings.Repeat("b", 40) + ".txt", false, strings.Repeat("B", 27) + ".TXT;1"},
	}
	for _, tc := range tests {
		if got := isoIdentifier(tc.name, tc.dir); got != tc.want {
			t.Errorf("isoIdentifier(%q, %v) = %q, want %q", tc.name, tc.dir, got, tc.want)
		}
	}
	if got := uniquify("USER_DATA.;1", 2, false); got != "USER_DATA_2.;1" {
		t.Errorf("uniquify = %q", got)
	}
	if got := uniquify(strings.Repeat("A", 31), 12, true); got != strings.Repeat("A", 28)+"_12" {
		t.Errorf("uniquify dir = %q", got)
	}
}

// TestImageIsPadded keeps every image at least 150 sectors past its data:
// busybox's label probe (findfs in small guests) reads 68 KiB at once and
// sees no label on a shorter device.
func TestImageIsPadded(t *testing.T) {
	img, err := NoCloudISO([]byte("u"), []byte("m"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(img) < 0x11000 {
		t.Errorf("image of %d bytes is shorter than busybox's probe buffer (69632)", len(img))
	}
	if !bytes.Equal(img[len(img)-padSectors*sectorSize:], make([]byte, padSectors*sectorSize)) {
		t.Error("the last 150 sectors are not zero padding")
	}
}
