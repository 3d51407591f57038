package importer

import (
	"crypto/subtle"
	"io"
	"net/http"
	"os"
	"strconv"
)

// CloneSourcePath is the URL path a clone source serves its image at.
const CloneSourcePath = "/disk.img"

// CloneSource serves one image (a Filesystem claim's disk.img or a Block claim's device) to the
// importer of a clone, which presents the token as "Authorization: Bearer <token>".
type CloneSource struct {
	// Path is the file or device served.
	Path string
	// Token is the secret the importer must present.
	Token string
}

// ServeHTTP answers GET (and HEAD) of CloneSourcePath with the image and its length.
func (s *CloneSource) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != CloneSourcePath {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	want := "Bearer " + s.Token
	if s.Token == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	f, err := os.Open(s.Path)
	if err != nil {
		http.Error(w, "the clone source: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer func() { _ = f.Close() }()
	size, err := f.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		http.Error(w, "the clone source: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = io.Copy(w, f)
}
