package podfs

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenLauncher(t *testing.T) {
	// A deliberately long root: the socket must still be reachable.
	root := filepath.Join(t.TempDir(), strings.Repeat("k", 90))
	l := Locator{KubeletRoot: root}
	const uid = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"

	if _, err := l.OpenLauncher(uid); !errors.Is(err, ErrNotReady) {
		t.Fatalf("no volumes: err = %v, want ErrNotReady", err)
	}
	priv := l.EmptyDir(uid, PrivateVolume)
	if err := os.MkdirAll(filepath.Join(priv, "libvirt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(l.EmptyDir(uid, DisksVolume), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := l.OpenLauncher(uid); !errors.Is(err, ErrNotReady) {
		t.Fatalf("no ready marker: err = %v, want ErrNotReady", err)
	}
	if err := os.WriteFile(filepath.Join(priv, ReadyMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if len(filepath.Join(priv, LibvirtSocket)) <= 108 {
		t.Fatalf("test setup: host socket path should exceed 108 bytes")
	}
	launcher, err := l.OpenLauncher(uid)
	if err != nil {
		t.Fatal(err)
	}
	defer launcher.Close()
	sock := launcher.Private.Path(LibvirtSocket)
	// Stands for libvirtd, which binds the socket inside the pod.
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("listening on %s: %v", sock, err)
	}
	defer ln.Close()
	if _, err := os.Stat(filepath.Join(priv, LibvirtSocket)); err != nil {
		t.Errorf("socket not at its host path: %v", err)
	}
	if len(sock) > 60 {
		t.Errorf("short path %q is %d bytes", sock, len(sock))
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("dialing %s: %v", sock, err)
	}
	c.Close()
	if got, want := launcher.Private.HostPath(ReadyMarker), filepath.Join(priv, ReadyMarker); got != want {
		t.Errorf("HostPath = %q, want %q", got, want)
	}
}
