package launcher

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/node/qemucaps"
)

func TestProbeQEMUCapabilities(t *testing.T) {
	dir := shortTempDir(t)
	opts := testOptions(t, dir, "exec sleep 60")
	h := newFakeHypervisor(nil)
	cache := filepath.Join(opts.StateRoot, qemucaps.CacheDir)
	// libvirt's probe writes its cache file.
	h.probe = func() error {
		if err := os.MkdirAll(cache, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(cache, "9268.xml"), []byte("<qemuCaps/>"), 0o600)
	}
	l, err := New(opts, func(string) (Hypervisor, error) { return h, nil }, klog.Background())
	if err != nil {
		t.Fatal(err)
	}
	kind := qemucaps.KindTCG
	if syscall.Access("/dev/kvm", 0o6) == nil {
		kind = qemucaps.KindKVM
	}
	out := filepath.Join(dir, "out")
	// What an earlier probe, of another QEMU, left.
	if err := os.MkdirAll(filepath.Join(out, kind), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, kind, "old.xml"), []byte("<qemuCaps>old</qemuCaps>"), 0o644); err != nil {
		t.Fatal(err)
	}

	if err := l.ProbeQEMUCapabilities(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(out, kind, "9268.xml")); err != nil || string(got) != "<qemuCaps/>" {
		t.Errorf("published %s/9268.xml: %q, %v; want libvirt's cache file", kind, got, err)
	}
	if entries, _ := os.ReadDir(filepath.Join(out, kind)); len(entries) != 1 {
		t.Errorf("%s holds %d files, want only the new probe's", kind, len(entries))
	}
	if !h.closed {
		t.Error("the libvirt connection was not closed")
	}
}

func TestProbeQEMUCapabilitiesFailsWithoutACache(t *testing.T) {
	dir := shortTempDir(t)
	opts := testOptions(t, dir, "exec sleep 60")
	h := newFakeHypervisor(nil) // probes, but writes nothing
	l, err := New(opts, func(string) (Hypervisor, error) { return h, nil }, klog.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.ProbeQEMUCapabilities(context.Background(), filepath.Join(dir, "out")); err == nil {
		t.Error("no error although libvirt wrote no capability cache")
	}
}

func TestProbeQEMUCapabilitiesGivesUpAHangingProbe(t *testing.T) {
	defer func(d time.Duration) { probeTimeout = d }(probeTimeout)
	probeTimeout = 200 * time.Millisecond
	dir := shortTempDir(t)
	opts := testOptions(t, dir, "exec sleep 60")
	hang := make(chan struct{})
	defer close(hang)
	h := newFakeHypervisor(nil)
	h.probe = func() error { <-hang; return nil }
	l, err := New(opts, func(string) (Hypervisor, error) { return h, nil }, klog.Background())
	if err != nil {
		t.Fatal(err)
	}
	err = l.ProbeQEMUCapabilities(context.Background(), filepath.Join(dir, "out"))
	if err == nil || !strings.Contains(err.Error(), "did not end") {
		t.Errorf("error %v, want the probe given up", err)
	}
}
