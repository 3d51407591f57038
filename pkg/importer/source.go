package importer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// HTTPSource says how to fetch an image over HTTP(S).
type HTTPSource struct {
	// URL is the image's address.
	URL string
	// Headers are extra request headers, "Name: value" each.
	Headers []string
	// Username and Password, when set, are sent as basic authentication.
	Username, Password string
	// CACerts, when set, are the PEM certificates trusted for an https URL (instead of the
	// system's).
	CACerts []byte
}

// openHTTP starts the download and returns the body and its length (0: unknown).
func openHTTP(ctx context.Context, src *HTTPSource) (io.ReadCloser, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.URL, nil)
	if err != nil {
		return nil, 0, permanentf("invalid URL %q: %v", src.URL, err)
	}
	for _, h := range src.Headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return nil, 0, permanentf("invalid extra header %q: must be \"Name: value\"", h)
		}
		req.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	if src.Username != "" || src.Password != "" {
		req.SetBasicAuth(src.Username, src.Password)
	}
	transport, err := newTransport(src.CACerts, false, false)
	if err != nil {
		return nil, 0, err
	}
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("unable to connect to http data source: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		return nil, 0, fmt.Errorf("unable to connect to http data source: expected status code 200, got %d. Status: %s",
			resp.StatusCode, resp.Status)
	}
	size := resp.ContentLength
	if size < 0 {
		size = 0
	}
	return resp.Body, size, nil
}

// openFile opens a file in the pod (a registry image's disk copied out of it) and returns its
// size.
func openFile(path string) (io.ReadCloser, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, permanentf("the source file: %v", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}
