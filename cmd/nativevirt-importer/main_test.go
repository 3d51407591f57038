package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// mountLikeKubelet writes files as the kubelet mounts a Secret or ConfigMap: the data in a
// timestamped directory, a ..data link to it, and one link per key.
func mountLikeKubelet(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	data := filepath.Join(dir, "..2026_11_29_09_00_00.1")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(data), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for k, v := range files {
		if err := os.WriteFile(filepath.Join(data, k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHTTPSource: CDI's secretRef keys accessKeyId and secretKey become basic auth, each key of a
// secretExtraHeaders Secret a header, each certConfigMap file a trusted PEM; every file once.
func TestHTTPSource(t *testing.T) {
	root := t.TempDir()
	secret, headers, certs := filepath.Join(root, "secret"), filepath.Join(root, "headers"), filepath.Join(root, "certs")
	mountLikeKubelet(t, secret, map[string]string{"accessKeyId": "user\n", "secretKey": "pass\n"})
	mountLikeKubelet(t, filepath.Join(headers, "header-0"), map[string]string{"token": "Authorization: Bearer x\n"})
	mountLikeKubelet(t, certs, map[string]string{"ca.pem": "PEM-A", "other.pem": "PEM-B"})

	h, err := httpSource("https://images.example/d.img", []string{"X-A: 1"}, secret, headers, certs)
	if err != nil {
		t.Fatal(err)
	}
	if h.Username != "user" || h.Password != "pass" {
		t.Errorf("basic auth %q/%q, want user/pass", h.Username, h.Password)
	}
	if want := []string{"X-A: 1", "Authorization: Bearer x"}; !reflect.DeepEqual(h.Headers, want) {
		t.Errorf("headers %q, want %q", h.Headers, want)
	}
	if got := string(h.CACerts); got != "PEM-A\nPEM-B\n" {
		t.Errorf("certificates %q, want each file once", got)
	}
	if _, err := httpSource("https://x/", nil, filepath.Join(root, "missing"), "", ""); err == nil {
		t.Error("a secret without accessKeyId was accepted")
	}
}
