package importer

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportHTTPSWithCertConfigMap: an https server whose certificate the certConfigMap's PEM
// vouches for is trusted; without it (the system's roots) the import fails with a retryable
// error saying why; a certConfigMap without a certificate fails for good.
func TestImportHTTPSWithCertConfigMap(t *testing.T) {
	raw := rawDisk(t, mib)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(raw) }))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	run := func(certs []byte) (string, error) {
		dir := t.TempDir()
		_, err := Run(context.Background(), Options{HTTP: &HTTPSource{URL: srv.URL + "/disk.img", CACerts: certs},
			TargetDir: dir, ImageSize: 2 * mib, Progress: &Progress{}})
		return dir, err
	}

	dir, err := run(ca)
	if err != nil {
		t.Fatalf("with the certConfigMap's certificate: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, DiskImage))
	if err != nil || len(got) != 2*mib || string(got[:len(raw)]) != string(raw) {
		t.Errorf("disk.img: %d bytes (%v), want the image grown to 2 MiB", len(got), err)
	}

	if _, err := run(nil); err == nil || IsPermanent(err) || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the certificate: %v, want a retryable error about the certificate", err)
	}
	if _, err := run([]byte("not a certificate")); err == nil || !IsPermanent(err) || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("with a certConfigMap without a certificate: %v, want a permanent error saying so", err)
	}
}
