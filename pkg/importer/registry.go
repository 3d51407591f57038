package importer

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// dockerScheme starts the URL of a registry source.
const dockerScheme = "docker://"

// diskDir is where a containerDisk image holds its disk (KubeVirt's layout).
const diskDir = "disk"

// RegistrySource says how to pull a containerDisk image from a registry in the importer pod.
type RegistrySource struct {
	// URL is docker://host[:port]/repository[:tag|@digest].
	URL string
	// Username and Password, when set, authenticate to the registry.
	Username, Password string
	// CACerts, when set, are PEM certificates trusted for the registry in addition to the
	// system's.
	CACerts []byte
	// Insecure allows plain http and unverified TLS (the registry is in CDIConfig
	// spec.insecureRegistries). Otherwise only verified https is used.
	Insecure bool
}

// parseRegistryURL parses docker://REF into an image reference.
func parseRegistryURL(url string, insecure bool) (name.Reference, error) {
	ref, ok := strings.CutPrefix(url, dockerScheme)
	if !ok {
		return nil, permanentf("invalid registry URL %q: it must start with %s", url, dockerScheme)
	}
	opts := []name.Option{name.WeakValidation}
	if insecure {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return nil, permanentf("invalid registry URL %q: %v", url, err)
	}
	return r, nil
}

// IsInsecureRegistry says whether the registry of a docker:// URL is one of insecure (CDIConfig
// spec.insecureRegistries: "host" or "host:port", as the URL names it).
func IsInsecureRegistry(url string, insecure []string) bool {
	if len(insecure) == 0 {
		return false
	}
	names := map[string]bool{}
	if rest, ok := strings.CutPrefix(url, dockerScheme); ok {
		host, _, _ := strings.Cut(rest, "/")
		names[host] = true
	}
	if ref, err := parseRegistryURL(url, false); err == nil {
		reg := ref.Context().RegistryStr()
		names[reg] = true
		if reg == name.DefaultRegistry {
			names["docker.io"] = true
		}
	}
	for _, r := range insecure {
		r = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(r, "https://"), "http://"), "/")
		if r != "" && names[r] {
			return true
		}
	}
	return false
}

// openRegistry pulls the image's manifest and streams its layers until the first regular file
// under /disk, whose content it returns with its size. The image is never stored whole: the
// layer holding the disk is read once, as the import consumes it.
func openRegistry(ctx context.Context, src *RegistrySource) (io.ReadCloser, int64, error) {
	ref, err := parseRegistryURL(src.URL, src.Insecure)
	if err != nil {
		return nil, 0, err
	}
	t, err := newTransport(src.CACerts, true, src.Insecure)
	if err != nil {
		return nil, 0, err
	}
	auth := authn.Anonymous
	if src.Username != "" || src.Password != "" {
		auth = &authn.Basic{Username: src.Username, Password: src.Password}
	}
	img, err := remote.Image(ref, remote.WithContext(ctx), remote.WithAuth(auth),
		remote.WithTransport(&secureOnly{next: t, insecure: src.Insecure}),
		remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}))
	if err != nil {
		return nil, 0, fmt.Errorf("unable to pull image %s: %w", src.URL, err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, 0, fmt.Errorf("unable to read the layers of image %s: %w", src.URL, err)
	}
	for i, l := range layers {
		rc, size, found, err := findDisk(l)
		if err != nil {
			return nil, 0, fmt.Errorf("reading layer %d of image %s: %w", i+1, src.URL, err)
		}
		if found {
			return rc, size, nil
		}
	}
	return nil, 0, permanentf("the image %s has no file under /%s/: not a containerDisk image (KubeVirt's layout puts the disk in /%s)",
		src.URL, diskDir, diskDir)
}

// findDisk reads a layer up to its first regular file under disk/ and returns a reader of that
// file (which reads the rest of the layer at its end, so that the layer's digest is checked).
func findDisk(l v1.Layer) (io.ReadCloser, int64, bool, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, 0, false, err
	}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			// The layer holds no disk.
			return nil, 0, false, rc.Close()
		}
		if err != nil {
			_ = rc.Close()
			return nil, 0, false, err
		}
		if isDiskFile(hdr) {
			return &diskReader{tar: tr, layer: rc}, hdr.Size, true, nil
		}
	}
}

// isDiskFile says whether a layer's entry is a regular file under disk/ (not a whiteout).
func isDiskFile(hdr *tar.Header) bool {
	if hdr.Typeflag != tar.TypeReg {
		return false
	}
	p := path.Clean("/" + hdr.Name)
	dir, base := path.Split(p)
	return strings.HasPrefix(dir, "/"+diskDir+"/") && !strings.HasPrefix(base, ".wh.")
}

// diskReader reads the disk file of a layer.
type diskReader struct {
	tar   *tar.Reader
	layer io.ReadCloser
}

// Read reads the disk; at its end it reads the rest of the layer, whose digest the registry
// client checks at the layer's end: a layer that does not match its digest is an error, not
// the end of the disk.
func (d *diskReader) Read(b []byte) (int, error) {
	n, err := d.tar.Read(b)
	if errors.Is(err, io.EOF) {
		if _, derr := io.Copy(io.Discard, d.layer); derr != nil {
			return n, fmt.Errorf("reading the rest of the layer: %w", derr)
		}
	}
	return n, err
}

func (d *diskReader) Close() error { return d.layer.Close() }

// secureOnly refuses plain http unless the registry is insecure: the registry client falls
// back to http for registries with private addresses, which CDI allows only for the
// registries listed in CDIConfig spec.insecureRegistries.
type secureOnly struct {
	next     http.RoundTripper
	insecure bool
}

func (s *secureOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" && !s.insecure {
		return nil, fmt.Errorf("plain http is used only for registries listed in CDIConfig spec.insecureRegistries, and %s is not", req.URL.Host)
	}
	return s.next.RoundTrip(req)
}
