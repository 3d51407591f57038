package importer

import (
	"bytes"
	"context"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/nativevirt/nativevirt/pkg/importer/registrytest"
)

// newRegistry serves an in-process registry (TLS when tlsServer), behind basic auth when user
// is set, and returns the server.
func newRegistry(t *testing.T, tlsServer bool, user, password string) *httptest.Server {
	t.Helper()
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if user != "" {
		h = registrytest.BasicAuth(h, user, password)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes of clients that do not trust it
	if tlsServer {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// host is the registry's host:port.
func host(srv *httptest.Server) string {
	return strings.TrimPrefix(strings.TrimPrefix(srv.URL, "https://"), "http://")
}

// push pushes img to the registry as repo:tag.
func push(t *testing.T, srv *httptest.Server, ref string, img v1.Image, user, password string) {
	t.Helper()
	var tr http.RoundTripper
	if srv.TLS != nil {
		tr = srv.Client().Transport
	}
	if err := registrytest.Push(host(srv)+"/"+ref, img, tr, user, password); err != nil {
		t.Fatal(err)
	}
}

// caOf is the PEM of the test server's certificate.
func caOf(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func image(t *testing.T, layers ...[]registrytest.File) v1.Image {
	t.Helper()
	img, err := registrytest.Image(layers...)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestImportRegistry(t *testing.T) {
	needQemuImg(t)
	raw := rawDisk(t, 2*mib)
	qcow := qcow2Of(t, raw)
	plain, secure, plainAuth := newRegistry(t, false, "", ""), newRegistry(t, true, "user", "pass"), newRegistry(t, false, "user", "pass")
	// A containerDisk whose qcow2 is in its second layer, after a layer of other files; an
	// image of raw.gz; and an image without a disk.
	twoLayers := image(t, []registrytest.File{{Name: "etc/os-release", Data: []byte("ID=test\n")}, {Name: "disk.img", Data: []byte("not here")}},
		[]registrytest.File{{Name: "disk/fedora.qcow2", Data: qcow}})
	rawGz := image(t, []registrytest.File{{Name: "./disk/disk.img.gz", Data: gz(t, raw)}})
	noDisk := image(t, []registrytest.File{{Name: "data/disk.img", Data: raw}})
	for _, srv := range []*httptest.Server{plain, secure, plainAuth} {
		user, pass := "", ""
		if srv != plain {
			user, pass = "user", "pass"
		}
		push(t, srv, "demo:latest", twoLayers, user, pass)
		push(t, srv, "raw:gz", rawGz, user, pass)
		push(t, srv, "nodisk:latest", noDisk, user, pass)
	}

	for _, tc := range []struct {
		name        string
		src         RegistrySource
		format      string
		compression int
	}{
		{"insecure http registry", RegistrySource{URL: "docker://" + host(plain) + "/demo:latest", Insecure: true}, "qcow2", 0},
		{"raw.gz by tag", RegistrySource{URL: "docker://" + host(plain) + "/raw:gz", Insecure: true}, "raw", 1},
		{"https with a CA and basic auth", RegistrySource{URL: "docker://" + host(secure) + "/demo:latest",
			Username: "user", Password: "pass", CACerts: caOf(secure)}, "qcow2", 0},
		{"insecure http registry with basic auth", RegistrySource{URL: "docker://" + host(plainAuth) + "/demo:latest",
			Username: "user", Password: "pass", Insecure: true}, "qcow2", 0},
		{"insecure https (unverified)", RegistrySource{URL: "docker://" + host(secure) + "/raw:gz",
			Username: "user", Password: "pass", Insecure: true}, "raw", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := Options{Registry: &tc.src, TargetDir: dir, ImageSize: 4 * mib, Progress: &Progress{}}
			got := importDisk(t, o, tc.format, tc.compression)
			if len(got) != 4*mib || !bytes.Equal(got[:len(raw)], raw) || !allZero(got[len(raw):]) {
				t.Errorf("disk.img (%d bytes) does not hold the image's disk grown to %d bytes", len(got), 4*mib)
			}
			if p := o.Progress.Report(); p.Progress != "100.0%" || p.Read == 0 {
				t.Errorf("progress %+v, want 100.0%% with the bytes read", p)
			}
			assertNoLeftovers(t, dir)
		})
	}

	// The image's digest pins it.
	digest, err := twoLayers.Digest()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Run(context.Background(), Options{Registry: &RegistrySource{URL: "docker://" + host(plain) + "/demo@" + digest.String(), Insecure: true},
		TargetDir: dir, ImageSize: 4 * mib}); err != nil {
		t.Errorf("by digest: %v", err)
	}
}

func TestImportRegistryFailures(t *testing.T) {
	raw := rawDisk(t, mib)
	plain, secure := newRegistry(t, false, "", ""), newRegistry(t, true, "user", "pass")
	push(t, plain, "nodisk:latest", image(t, []registrytest.File{{Name: "data/disk.img", Data: raw}}), "", "")
	push(t, plain, "demo:latest", image(t, []registrytest.File{{Name: "disk/disk.img", Data: raw}}), "", "")
	push(t, secure, "demo:latest", image(t, []registrytest.File{{Name: "disk/disk.img", Data: raw}}), "user", "pass")
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	for _, tc := range []struct {
		name      string
		src       RegistrySource
		permanent bool
		want      string
	}{
		{"an image without /disk", RegistrySource{URL: "docker://" + host(plain) + "/nodisk:latest", Insecure: true}, true, "has no file under /disk/"},
		{"an image that is not there", RegistrySource{URL: "docker://" + host(plain) + "/demo:missing", Insecure: true}, false, "MANIFEST_UNKNOWN"},
		{"http to a registry not listed as insecure", RegistrySource{URL: "docker://" + host(plain) + "/demo:latest"}, false, "spec.insecureRegistries"},
		{"an unknown certificate", RegistrySource{URL: "docker://" + host(secure) + "/demo:latest", Username: "user", Password: "pass"}, false, "certificate"},
		{"a wrong password", RegistrySource{URL: "docker://" + host(secure) + "/demo:latest", Username: "user", Password: "nope", CACerts: caOf(secure)}, false, "UNAUTHORIZED"},
		{"no credentials", RegistrySource{URL: "docker://" + host(secure) + "/demo:latest", CACerts: caOf(secure)}, false, "UNAUTHORIZED"},
		{"an unreachable registry", RegistrySource{URL: "docker://" + host(gone) + "/demo:latest", Insecure: true}, false, "unable to pull image"},
		{"a bad reference", RegistrySource{URL: "docker://" + host(plain) + "/Demo:latest", Insecure: true}, true, "invalid registry URL"},
		{"a CA that is not PEM", RegistrySource{URL: "docker://" + host(secure) + "/demo:latest", CACerts: []byte("nope")}, true, "no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Run(context.Background(), Options{Registry: &tc.src, TargetDir: dir, ImageSize: 4 * mib})
			if err == nil {
				t.Fatal("Run succeeded")
			}
			t.Logf("%v", err)
			if IsPermanent(err) != tc.permanent || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q (permanent %v), want one saying %q (permanent %v)", err, IsPermanent(err), tc.want, tc.permanent)
			}
			if _, err := os.Stat(filepath.Join(dir, DiskImage)); !os.IsNotExist(err) {
				t.Errorf("disk.img exists after a failure: %v", err)
			}
		})
	}
}

func TestIsInsecureRegistry(t *testing.T) {
	for _, tc := range []struct {
		url      string
		insecure []string
		want     bool
	}{
		{"docker://10.88.0.1:5000/demo:latest", []string{"10.88.0.1:5000"}, true},
		{"docker://10.88.0.1:5000/demo:latest", []string{"10.88.0.1"}, false},
		{"docker://registry.local/demo", []string{"http://registry.local/"}, true},
		{"docker://quay.io/containerdisks/fedora:40", []string{"registry.local"}, false},
		{"docker://fedora:40", []string{"docker.io"}, true},
		{"docker://docker.io/library/fedora:40", []string{"index.docker.io"}, true},
		{"docker://quay.io/x", nil, false},
	} {
		if got := IsInsecureRegistry(tc.url, tc.insecure); got != tc.want {
			t.Errorf("IsInsecureRegistry(%q, %q) = %v, want %v", tc.url, tc.insecure, got, tc.want)
		}
	}
}
