package podfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// notifications collects the keys a ReadyWatch reports.
type notifications chan string

func (n notifications) expect(t *testing.T, key string) {
	t.Helper()
	select {
	case got := <-n:
		if got != key {
			t.Fatalf("notified %q, want %q", got, key)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no notification for %q", key)
	}
}

func (n notifications) expectNone(t *testing.T) {
	t.Helper()
	select {
	case got := <-n:
		t.Fatalf("unexpected notification %q", got)
	case <-time.After(200 * time.Millisecond):
	}
}

func newReadyWatch(t *testing.T) (*ReadyWatch, notifications) {
	t.Helper()
	n := make(notifications, 10)
	w, err := NewReadyWatch(func(key string) { n <- key })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w, n
}

func TestReadyWatch(t *testing.T) {
	loc := Locator{KubeletRoot: t.TempDir()}
	const pod, other types.UID = "pod-1", "pod-2"
	w, n := newReadyWatch(t)

	if err := w.Watch(loc, pod, "ns/vm"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("volume not there yet: err = %v, want ErrNotExist", err)
	}
	priv := loc.EmptyDir(pod, PrivateVolume)
	for _, d := range []string{priv, loc.EmptyDir(other, PrivateVolume)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Watch(loc, pod, "ns/vm"); err != nil {
		t.Fatal(err)
	}
	if err := w.Watch(loc, pod, "ns/vm"); err != nil || w.Watching() != 1 {
		t.Fatalf("watching again: err %v, %d pods watched, want 1", err, w.Watching())
	}
	if err := w.Watch(loc, other, "ns/other"); err != nil {
		t.Fatal(err)
	}

	// Other files (libvirt's socket directory, temporary files) are not the marker.
	if err := os.Mkdir(filepath.Join(priv, "libvirt"), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(priv, ".ready.123")
	if err := os.WriteFile(tmp, []byte("now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n.expectNone(t)
	// The launcher renames its marker into place.
	if err := os.Rename(tmp, filepath.Join(priv, ReadyMarker)); err != nil {
		t.Fatal(err)
	}
	n.expect(t, "ns/vm")

	// A plain create counts too.
	if err := os.WriteFile(filepath.Join(loc.EmptyDir(other, PrivateVolume), ReadyMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	n.expect(t, "ns/other")

	// Forgotten: a new marker is not reported.
	w.Forget(pod)
	if err := os.Remove(filepath.Join(priv, ReadyMarker)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(priv, ReadyMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	n.expectNone(t)

	// The kubelet removes a deleted pod's volume: its watch goes away by itself.
	if err := os.RemoveAll(loc.EmptyDir(other, PrivateVolume)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for w.Watching() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := w.Watching(); got != 0 {
		t.Errorf("%d pods still watched after their volumes went away", got)
	}

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Watch(loc, pod, "ns/vm"); err == nil {
		t.Error("Watch after Close succeeded")
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
