// Package registrytest builds containerDisk images and pushes them to registries, for tests of
// the importer's registry source (unit tests serve go-containerregistry's in-process registry
// with httptest; the e2e tests serve it on the pods' network).
package registrytest

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// File is a regular file of a layer.
type File struct {
	// Name is the path in the image ("disk/disk.img").
	Name string
	Data []byte
}

// ContainerDisk is an image in KubeVirt's containerDisk layout: disk at /disk/disk.img, owned
// by 107 (qemu) and readable only by it, as KubeVirt's containerDisk images have it.
func ContainerDisk(disk []byte) (v1.Image, error) {
	return Image([]File{{Name: "disk/disk.img", Data: disk}})
}

// Image is an image of one layer per slice of files; a file's directories are entries too.
func Image(layers ...[]File) (v1.Image, error) {
	var ls []v1.Layer
	for _, files := range layers {
		b, err := layerTar(files)
		if err != nil {
			return nil, err
		}
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
	}
	return mutate.AppendLayers(empty.Image, ls...)
}

func layerTar(files []File) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	mtime := time.Unix(0, 0)
	for _, f := range files {
		for i := range len(f.Name) {
			if f.Name[i] != '/' || dirs[f.Name[:i+1]] {
				continue
			}
			dirs[f.Name[:i+1]] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: f.Name[:i+1], Mode: 0o555, ModTime: mtime}); err != nil {
				return nil, err
			}
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.Name, Mode: 0o440, Uid: 107, Gid: 107, Size: int64(len(f.Data)), ModTime: mtime}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Push writes img to ref (host:port/repository:tag) over plain http, or over https with t
// (which then trusts the registry), as user:password when user is set.
func Push(ref string, img v1.Image, t http.RoundTripper, user, password string) error {
	opts := []name.Option{}
	if t == nil {
		opts = append(opts, name.Insecure)
		t = http.DefaultTransport
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", ref, err)
	}
	auth := authn.Anonymous
	if user != "" {
		auth = &authn.Basic{Username: user, Password: password}
	}
	if err := remote.Write(r, img, remote.WithTransport(t), remote.WithAuth(auth)); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	return nil
}

// BasicAuth wraps a registry handler to require user:password (as a registry does, with a
// Basic challenge on /v2/).
func BasicAuth(h http.Handler, user, password string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="registrytest"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
