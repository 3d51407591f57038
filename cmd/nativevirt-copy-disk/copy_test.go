package main

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolveSource(t *testing.T) {
	tests := []struct {
		name    string
		files   []string // created with one byte each; "dir/" creates an empty directory
		source  string
		want    string
		wantErr string
	}{
		{name: "file", files: []string{"disk/disk.img"}, source: "disk/disk.img", want: "disk/disk.img"},
		{name: "directory: its file", files: []string{"disk/disk.img"}, source: "disk", want: "disk/disk.img"},
		{name: "directory: first in lexical order", files: []string{"disk/b.qcow2", "disk/a.img"}, source: "disk", want: "disk/a.img"},
		{name: "directory: depth first", files: []string{"disk/a/x.img", "disk/b.img"}, source: "disk", want: "disk/a/x.img"},
		{name: "directory: empty subdirectories skipped", files: []string{"disk/a/", "disk/z.img"}, source: "disk", want: "disk/z.img"},
		{name: "empty directory", files: []string{"disk/"}, source: "disk", wantErr: "no regular file under"},
		{name: "missing", source: "disk", wantErr: "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tt.files {
				p := filepath.Join(root, f)
				if strings.HasSuffix(f, "/") {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte{1}, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := resolveSource(filepath.Join(root, tt.source))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, tt.want); got != want {
				t.Errorf("resolveSource = %s, want %s", got, want)
			}
		})
	}
}

func TestCopyFile(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	data := func(n int) []byte {
		b := make([]byte, n)
		rnd.Read(b)
		return b
	}
	zeros := func(n int) []byte { return make([]byte, n) }
	tests := []struct {
		name        string
		content     []byte
		wantWritten int64
	}{
		{name: "empty", content: nil, wantWritten: 0},
		{name: "small", content: data(100), wantWritten: 100},
		{name: "all zeros", content: zeros(3 * blockSize), wantWritten: 0},
		{name: "data, hole, data", content: bytes.Join([][]byte{data(blockSize), zeros(4 * blockSize), data(10)}, nil), wantWritten: blockSize + 10},
		{name: "trailing hole", content: append(data(blockSize), zeros(2*blockSize+7)...), wantWritten: blockSize},
		{name: "partly zero block is written", content: append(zeros(blockSize-1), 9), wantWritten: blockSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src.img")
			if err := os.WriteFile(src, tt.content, 0o400); err != nil {
				t.Fatal(err)
			}
			dest := filepath.Join(dir, "disks", "vol", "disk.img")
			st, err := copyFile(src, dest, diskMode)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(dest)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.content) {
				t.Errorf("copy differs from the source (%d bytes, want %d)", len(got), len(tt.content))
			}
			want := copyStats{size: int64(len(tt.content)), written: tt.wantWritten}
			if diff := cmp.Diff(want, st, cmp.AllowUnexported(copyStats{})); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
			fi, err := os.Stat(dest)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", fi.Mode().Perm())
			}
			// Holes take no blocks (allow one filesystem block of slack per written extent).
			if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
				if used := sys.Blocks * 512; used > tt.wantWritten+2*blockSize {
					t.Errorf("copy uses %d bytes on disk for %d written: not sparse", used, tt.wantWritten)
				}
			}
			left, _ := filepath.Glob(filepath.Join(dir, "disks", "vol", ".*"))
			if len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "disk"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "disk", "disk.img"), []byte("bootable"), 0o444); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(dir, "out", "disk.img")
	tests := []struct {
		name string
		args []string
		want int
	}{
		{name: "copies", args: []string{"--source", filepath.Join(dir, "disk"), "--dest", dest}, want: 0},
		{name: "no dest", args: []string{"--source", filepath.Join(dir, "disk")}, want: 2},
		{name: "extra argument", args: []string{"--dest", dest, "x"}, want: 2},
		{name: "missing source", args: []string{"--source", filepath.Join(dir, "nope"), "--dest", dest}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := run(tt.args); got != tt.want {
				t.Errorf("run(%q) = %d, want %d", tt.args, got, tt.want)
			}
		})
	}
	got, err := os.ReadFile(dest)
	if err != nil || string(got) != "bootable" {
		t.Errorf("copy = %q, %v", got, err)
	}
}

// TestStaticDependencies keeps the binary static whatever CGO_ENABLED says: it runs in
// containerDisk images that have no libc, so it may only use standard packages that never
// link C (no net, os/user or runtime/cgo).
func TestStaticDependencies(t *testing.T) {
	// go test puts the running toolchain's bin directory first in the test's PATH.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, std, _ := strings.Cut(line, " ")
		switch {
		case pkg == "github.com/nativevirt/nativevirt/cmd/nativevirt-copy-disk":
		case std != "true", pkg == "runtime/cgo", pkg == "net", pkg == "os/user":
			bad = append(bad, pkg)
		}
	}
	if len(bad) > 0 {
		t.Errorf("nativevirt-copy-disk depends on %v: it must stay a static, standard-library-only binary", bad)
	}
}
