package importer

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
)

// The paths of CDI's upload API, served by the upload proxy and, behind it, by the upload
// server. The asynchronous ones answer as the synchronous ones here: the server answers once the
// image is in place (clients then wait for the DataVolume's Succeeded, which follows at once).
var (
	// UploadPaths take the image as the request body.
	UploadPaths = []string{"/v1beta1/upload", "/v1beta1/upload-async", "/v1alpha1/upload", "/v1alpha1/upload-async"}
	// UploadFormPaths take it as the multipart form field "file".
	UploadFormPaths = []string{"/v1beta1/upload-form", "/v1beta1/upload-form-async", "/v1alpha1/upload-form", "/v1alpha1/upload-form-async"}
)

// UploadFormField is the multipart form field holding the image.
const UploadFormField = "file"

// What the DataVolume controller and the upload proxy agree on about upload server pods.
const (
	// UploadPodPrefix starts the name of an upload server pod; the claim's name follows (CDI's).
	UploadPodPrefix = "cdi-upload-"
	// UploadPort is where an upload server pod receives the image from the upload proxy.
	UploadPort = 8443
	// UploadTokenEnv carries the secret the upload proxy presents to an upload server pod.
	UploadTokenEnv = "NATIVEVIRT_UPLOAD_TOKEN"
	// The annotations CDI keeps on the claim of an upload, which `virtctl image-upload` reads:
	// the claim is an upload target, its upload pod's phase, and whether it is ready.
	AnnUploadTarget = "cdi.kubevirt.io/storage.upload.target"
	AnnPodPhase     = "cdi.kubevirt.io/storage.pod.phase"
	AnnPodReady     = "cdi.kubevirt.io/storage.pod.ready"
)

// IsUploadPath says whether p is one of CDI's upload paths, and whether it takes a form.
func IsUploadPath(p string) (ok, form bool) {
	for _, u := range UploadPaths {
		if p == u {
			return true, false
		}
	}
	for _, u := range UploadFormPaths {
		if p == u {
			return true, true
		}
	}
	return false, false
}

// ImportFunc imports an image read from r (size bytes, 0: unknown).
type ImportFunc func(ctx context.Context, r io.Reader, size int64) (Result, error)

// UploadServer receives one image for a claim (the upload server pod of a DataVolume with
// spec.source.upload), from the upload proxy, which presents Token as "Authorization: Bearer".
// The first upload that completes, or fails for good, ends its work: Done is closed and Outcome
// says how it went. An upload that fails otherwise (the client went away) may be repeated.
type UploadServer struct {
	// Token is the secret the proxy presents.
	Token string
	// Import writes the image into the claim.
	Import ImportFunc

	mu      sync.Mutex
	busy    bool
	ended   bool
	done    chan struct{}
	once    sync.Once
	result  Result
	lastErr error
}

// Done is closed once an upload has ended the server's work.
func (s *UploadServer) Done() <-chan struct{} { return s.doneChan() }

func (s *UploadServer) doneChan() chan struct{} {
	s.once.Do(func() { s.done = make(chan struct{}) })
	return s.done
}

// Outcome is the result of the upload that ended the server's work (valid after Done).
func (s *UploadServer) Outcome() (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.result, s.lastErr
}

// ServeHTTP answers /healthz, HEAD of the upload paths (so clients find the asynchronous
// endpoint), and POST of an image.
func (s *UploadServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		_, _ = io.WriteString(w, "ok")
		return
	}
	ok, form := IsUploadPath(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	want := "Bearer " + s.Token
	if s.Token == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	switch r.Method {
	case http.MethodHead:
		return
	case http.MethodPost, http.MethodPut:
	default:
		w.Header().Set("Allow", "HEAD, POST, PUT")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if msg := s.begin(); msg != "" {
		http.Error(w, msg, http.StatusConflict)
		return
	}
	body, size, err := uploadBody(r, form)
	if err != nil {
		s.release()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	res, err := s.Import(r.Context(), body, size)
	switch {
	case err == nil:
		s.end(res, nil)
		_, _ = io.WriteString(w, "upload complete\n")
	case IsPermanent(err):
		s.end(res, err)
		http.Error(w, "the upload failed: "+err.Error(), http.StatusBadRequest)
	default:
		s.release()
		s.mu.Lock()
		s.lastErr = err
		s.mu.Unlock()
		http.Error(w, "the upload failed, it may be retried: "+err.Error(), http.StatusInternalServerError)
	}
}

// begin claims the server for one upload; it returns why not when it cannot.
func (s *UploadServer) begin() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.ended:
		return "the upload has completed already"
	case s.busy:
		return "an upload is already in progress"
	}
	s.busy = true
	return ""
}

func (s *UploadServer) release() {
	s.mu.Lock()
	s.busy = false
	s.mu.Unlock()
}

func (s *UploadServer) end(res Result, err error) {
	done := s.doneChan()
	s.mu.Lock()
	s.busy, s.ended, s.result, s.lastErr = false, true, res, err
	s.mu.Unlock()
	close(done)
}

// uploadBody returns the image of a request: its body, or its form's file field.
func uploadBody(r *http.Request, form bool) (io.Reader, int64, error) {
	if !form {
		size := r.ContentLength
		if size < 0 {
			size = 0
		}
		return r.Body, size, nil
	}
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(ct, "multipart/") {
		return nil, 0, fmt.Errorf("an upload form needs a multipart Content-Type, got %q", r.Header.Get("Content-Type"))
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, 0, err
	}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, 0, fmt.Errorf("the upload form has no %q field", UploadFormField)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("reading the upload form: %w", err)
		}
		if p.FormName() == UploadFormField {
			return p, 0, nil
		}
	}
}
