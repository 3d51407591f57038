package launcher

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nativevirt/nativevirt/pkg/node/cloudinit"
)

// kubeletVolume lays out files as the kubelet's atomic writer does: the content in a
// timestamped directory, ..data linking to it, and a link per top-level name.
func kubeletVolume(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	ts := filepath.Join(dir, "..2026_11_23_00_00_00.000000001")
	for name, data := range files {
		p := filepath.Join(ts, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(ts), filepath.Join(dir, kubeletDataDir)); err != nil {
		t.Fatal(err)
	}
	tops := map[string]bool{}
	for name := range files {
		tops[strings.SplitN(name, "/", 2)[0]] = true
	}
	for top := range tops {
		if err := os.Symlink(filepath.Join(kubeletDataDir, top), filepath.Join(dir, top)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCreateConfigDisks: each config volume becomes an ISO of its files (the current version
// behind ..data, nested paths as directories, none of the kubelet's own names), labelled as
// asked, and a new start replaces the disk of an earlier one.
func TestCreateConfigDisks(t *testing.T) {
	root := t.TempDir()
	volumes, disks := filepath.Join(root, "config"), filepath.Join(root, "disks")
	kubeletVolume(t, filepath.Join(volumes, "app-config"), map[string]string{
		"app.properties": "color=blue\n", "conf.d/extra.conf": "x=1\n",
	})
	kubeletVolume(t, filepath.Join(volumes, "sa"), map[string]string{"namespace": "default", "token": "eyJ..."})
	if err := os.MkdirAll(filepath.Join(disks, "app-config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(disks, "app-config", "config.iso"), []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}

	err := createConfigDisks(volumes, disks, ConfigDisks{"app-config": "cfgdata", "sa": "SA_DISK"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		volume, label string
		files         []cloudinit.File
	}{
		{"app-config", "cfgdata", []cloudinit.File{{Path: "app.properties", Data: []byte("color=blue\n")}, {Path: "conf.d/extra.conf", Data: []byte("x=1\n")}}},
		{"sa", "SA_DISK", []cloudinit.File{{Path: "namespace", Data: []byte("default")}, {Path: "token", Data: []byte("eyJ...")}}},
	} {
		want, err := cloudinit.BuildISO(tt.label, tt.files, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(disks, tt.volume, "config.iso"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the disk is not the ISO of %v labelled %s (%d bytes, want %d)", tt.volume, tt.files, tt.label, len(got), len(want))
		}
	}

	// A sysprep volume needs autounattend.xml (any case).
	kubeletVolume(t, filepath.Join(volumes, "sysprep-ok"), map[string]string{"Autounattend.xml": "<unattend/>"})
	kubeletVolume(t, filepath.Join(volumes, "sysprep-bad"), map[string]string{"unattend.txt": "x"})
	if err := createConfigDisks(volumes, disks, ConfigDisks{"sysprep-ok": "unattendCD"}); err != nil {
		t.Errorf("sysprep volume with Autounattend.xml: %v", err)
	}
	err = createConfigDisks(volumes, disks, ConfigDisks{"sysprep-bad": "unattendCD"})
	if err == nil || !strings.Contains(err.Error(), "config volume sysprep-bad: a sysprep volume must hold autounattend.xml") {
		t.Errorf("sysprep volume without autounattend.xml: %v", err)
	}

	// A volume that is not mounted fails the launcher, naming it.
	err = createConfigDisks(volumes, disks, ConfigDisks{"missing": "cfgdata"})
	if err == nil || !strings.Contains(err.Error(), "config volume missing") {
		t.Errorf("missing volume: %v, want an error naming it", err)
	}
}

func TestConfigDisksFlag(t *testing.T) {
	c := ConfigDisks{}
	for _, v := range []string{"app=cfgdata", "sa=SA"} {
		if err := c.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.String(); got != "app=cfgdata,sa=SA" {
		t.Errorf("String() = %q", got)
	}
	for _, bad := range []string{"app", "=x", "app=", "a/b=x"} {
		if err := c.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}
