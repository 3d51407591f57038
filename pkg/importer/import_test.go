package importer

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

const mib = 1 << 20

// rawDisk returns a small raw "disk": a boot-sector-like header and some data further on.
func rawDisk(t *testing.T, size int) []byte {
	t.Helper()
	b := make([]byte, size)
	copy(b, []byte{0xeb, 0x3c, 0x90, 'N', 'V', 'D', 'I', 'S', 'K', 0})
	b[510], b[511] = 0x55, 0xaa
	copy(b[size/2:], bytes.Repeat([]byte{0xa5}, 4096))
	return b
}

func needQemuImg(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Skip("qemu-img is not installed")
	}
}

// qcow2Of converts raw to qcow2 with the real qemu-img.
func qcow2Of(t *testing.T, raw []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.raw"), filepath.Join(dir, "out.qcow2")
	if err := os.WriteFile(in, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("qemu-img", "convert", "-f", "raw", "-O", "qcow2", in, out).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func xzOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// serveBytes serves body at /image and checks the request's extra header and basic auth.
func serveBytes(t *testing.T, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "pass" || r.Header.Get("X-Test") != "yes" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/image" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func httpOptions(srv *httptest.Server, path, dir string, size int64) Options {
	return Options{
		HTTP:      &HTTPSource{URL: srv.URL + path, Headers: []string{"X-Test: yes"}, Username: "user", Password: "pass"},
		TargetDir: dir, ImageSize: size, Progress: &Progress{},
	}
}

func TestImportFormats(t *testing.T) {
	needQemuImg(t)
	raw := rawDisk(t, 2*mib)
	qcow := qcow2Of(t, raw)
	for _, tc := range []struct {
		name, format string
		body         []byte
		compression  int
	}{
		{"raw", "raw", raw, 0},
		{"raw.gz", "raw", gz(t, raw), 1},
		{"raw.xz", "raw", xzOf(t, raw), 1},
		{"qcow2", "qcow2", qcow, 0},
		{"qcow2.gz", "qcow2", gz(t, qcow), 1},
		{"qcow2.xz", "qcow2", xzOf(t, qcow), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := httpOptions(serveBytes(t, tc.body), "/image", dir, 4*mib)
			got := importDisk(t, o, tc.format, tc.compression)
			if len(got) != 4*mib {
				t.Errorf("disk.img is %d bytes, want it grown to the image size %d", len(got), 4*mib)
			}
			if !bytes.Equal(got[:len(raw)], raw) || !allZero(got[len(raw):]) {
				t.Errorf("disk.img does not hold the source's data")
			}
			if p := o.Progress.Report().Progress; p != "100.0%" {
				t.Errorf("progress %q, want 100.0%%", p)
			}
			assertNoLeftovers(t, dir)
		})
	}
}

// assertNoLeftovers checks that only disk.img is in dir.
func assertNoLeftovers(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != DiskImage {
			t.Errorf("left %s behind", e.Name())
		}
	}
}

func TestImportISOFromFile(t *testing.T) {
	iso := make([]byte, 64*1024)
	copy(iso[32769:], "CD001")
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "cd.iso")
	if err := os.WriteFile(src, iso, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{File: src, TargetDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != "iso" || res.VirtualSize != int64(len(iso)) {
		t.Errorf("got %+v, want an iso of %d bytes", res, len(iso))
	}
}

func TestImportFailures(t *testing.T) {
	needQemuImg(t)
	raw := rawDisk(t, 2*mib)
	for _, tc := range []struct {
		name      string
		body      []byte
		path      string
		size      int64
		permanent bool
		want      string
	}{
		{"qcow2 bigger than the claim", qcow2Of(t, raw), "/image", mib, true, "bigger than the claim"},
		{"raw bigger than the claim", gz(t, raw), "/image", mib, true, "bigger than the claim"},
		{"html page", []byte("<html><body>Welcome</body></html>\n"), "/image", 4 * mib, true, "not a disk image"},
		{"empty", nil, "/image", 4 * mib, true, "empty"},
		{"broken gzip", append([]byte{0x1f, 0x8b}, bytes.Repeat([]byte{1}, 100)...), "/image", 4 * mib, true, "gzip"},
		{"not found", raw, "/nothing", 4 * mib, false, "expected status code 200, got 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Run(context.Background(), httpOptions(serveBytes(t, tc.body), tc.path, dir, tc.size))
			if err == nil {
				t.Fatal("Run succeeded")
			}
			if IsPermanent(err) != tc.permanent || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q (permanent %v), want one saying %q (permanent %v)", err, IsPermanent(err), tc.want, tc.permanent)
			}
			if _, err := os.Stat(filepath.Join(dir, DiskImage)); !os.IsNotExist(err) {
				t.Errorf("disk.img exists after a failure: %v", err)
			}
		})
	}
}

func TestImportUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := Run(context.Background(), Options{HTTP: &HTTPSource{URL: url + "/disk"}, TargetDir: t.TempDir(), ImageSize: mib})
	if err == nil || IsPermanent(err) || !strings.Contains(err.Error(), "unable to connect") {
		t.Errorf("got %v, want a retryable connection error", err)
	}
}

func TestBlank(t *testing.T) {
	dir := t.TempDir()
	if _, err := Run(context.Background(), Options{Blank: true, TargetDir: dir, ImageSize: 3 * mib}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, DiskImage))
	if err != nil || st.Size() != 3*mib {
		t.Fatalf("disk.img: %v, %v", st, err)
	}
	assertNoLeftovers(t, dir)
}

func TestBlockTarget(t *testing.T) {
	needQemuImg(t)
	raw := rawDisk(t, mib)
	dev := filepath.Join(t.TempDir(), "device")
	if err := os.WriteFile(dev, bytes.Repeat([]byte{0xff}, 2*mib), 0o600); err != nil {
		t.Fatal(err)
	}
	o := httpOptions(serveBytes(t, gz(t, qcow2Of(t, raw))), "/image", "", 0)
	o.TargetDevice, o.ScratchDir = dev, t.TempDir()
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:mib], raw) {
		t.Errorf("the device does not hold the image")
	}
}

func TestCloneSource(t *testing.T) {
	raw := rawDisk(t, mib)
	src := filepath.Join(t.TempDir(), DiskImage)
	if err := os.WriteFile(src, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&CloneSource{Path: src, Token: "secret"})
	defer srv.Close()
	dir := t.TempDir()
	o := Options{HTTP: &HTTPSource{URL: srv.URL + CloneSourcePath, Headers: []string{"Authorization: Bearer secret"}},
		TargetDir: dir, ImageSize: mib}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, DiskImage))
	if !bytes.Equal(got, raw) {
		t.Errorf("the clone differs from its source")
	}
	o.HTTP.Headers = []string{"Authorization: Bearer wrong"}
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong token: got %v, want 401", err)
	}
}

// importDisk runs the import o, checks the format and the number of compression layers it
// detected, and returns the disk.img it wrote.
func importDisk(t *testing.T, o Options, format string, compression int) []byte {
	t.Helper()
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Format != format || len(res.Compression) != compression {
		t.Errorf("format %q compression %v, want %q and %d layers", res.Format, res.Compression, format, compression)
	}
	got, err := os.ReadFile(filepath.Join(o.TargetDir, DiskImage))
	if err != nil {
		t.Fatal(err)
	}
	return got
}
