package importer

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// uploadServer is an UploadServer importing into dir (usable size: size).
func uploadServer(dir string, size int64) *UploadServer {
	return &UploadServer{Token: "secret", Import: func(ctx context.Context, r io.Reader, n int64) (Result, error) {
		return Run(ctx, Options{Reader: r, ReaderSize: n, TargetDir: dir, ImageSize: size})
	}}
}

func post(t *testing.T, s http.Handler, path, auth, contentType string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// TestUploadServer: a gzipped raw image posted to the asynchronous path becomes disk.img; the
// server's work is then done and further uploads are refused; a wrong secret is refused.
func TestUploadServer(t *testing.T) {
	dir := t.TempDir()
	s := uploadServer(dir, 4*mib)
	raw := rawDisk(t, 2*mib)
	if rec := post(t, s, "/v1beta1/upload-async", "Bearer wrong", "application/octet-stream", gz(t, raw)); rec.Code != http.StatusUnauthorized {
		t.Fatalf("wrong secret: %d", rec.Code)
	}
	head := httptest.NewRequest(http.MethodHead, "/v1beta1/upload-async", nil)
	head.Header.Set("Authorization", "Bearer secret")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, head)
	if rec.Code != http.StatusOK {
		t.Fatalf("HEAD: %d", rec.Code)
	}
	if rec := post(t, s, "/v1beta1/upload-async", "Bearer secret", "application/octet-stream", gz(t, raw)); rec.Code != http.StatusOK {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed after a complete upload")
	}
	if res, err := s.Outcome(); err != nil || res.Format != "raw" || len(res.Compression) != 1 {
		t.Errorf("outcome %+v %v", res, err)
	}
	got, err := os.ReadFile(filepath.Join(dir, DiskImage))
	if err != nil || !bytes.Equal(got[:len(raw)], raw) || len(got) != 4*mib {
		t.Errorf("disk.img: %d bytes, %v", len(got), err)
	}
	if rec := post(t, s, "/v1beta1/upload", "Bearer secret", "application/octet-stream", raw); rec.Code != http.StatusConflict {
		t.Errorf("second upload: %d, want 409", rec.Code)
	}
}

// TestUploadServerForm: the form paths take the image from the "file" field (here qcow2).
func TestUploadServerForm(t *testing.T) {
	needQemuImg(t)
	dir := t.TempDir()
	s := uploadServer(dir, 4*mib)
	raw := rawDisk(t, 2*mib)
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	fw, err := w.CreateFormFile(UploadFormField, "disk.qcow2")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write(qcow2Of(t, raw))
	_ = w.Close()
	if rec := post(t, s, "/v1beta1/upload-form", "Bearer secret", w.FormDataContentType(), body.Bytes()); rec.Code != http.StatusOK {
		t.Fatalf("form upload: %d %s", rec.Code, rec.Body)
	}
	if res, _ := s.Outcome(); res.Format != "qcow2" {
		t.Errorf("format %q, want qcow2", res.Format)
	}
	got, err := os.ReadFile(filepath.Join(dir, DiskImage))
	if err != nil || !bytes.Equal(got[:len(raw)], raw) {
		t.Errorf("disk.img: %v", err)
	}
}

// TestUploadServerFailures: text is not an image and an image bigger than the claim fails; both
// end the server's work for good with a 400 saying why.
func TestUploadServerFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     []byte
		contains string
	}{
		{name: "text", body: []byte("<html>not an image</html>\n"), contains: "not a disk image"},
		{name: "too big", body: rawDisk(t, 8*mib), contains: "bigger than the claim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := uploadServer(t.TempDir(), 4*mib)
			rec := post(t, s, "/v1beta1/upload", "Bearer secret", "application/octet-stream", tc.body)
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), tc.contains) {
				t.Errorf("%d %q, want 400 containing %q", rec.Code, rec.Body, tc.contains)
			}
			if _, err := s.Outcome(); !IsPermanent(err) {
				t.Errorf("outcome error %v, want a permanent one", err)
			}
		})
	}
}
