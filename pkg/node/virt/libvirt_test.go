package virt

import (
	"bytes"
	"errors"
	"image/png"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const testDomainXML = `<domain type='test'>
  <name>ns_vmi</name>
  <memory unit='MiB'>64</memory>
  <os><type>hvm</type></os>
  <metadata><nv:vmi xmlns:nv="http://nativevirt.io/domain/1"><nv:uid>uid-123</nv:uid></nv:vmi></metadata>
</domain>`

// TestLibvirtLifecycle drives the real implementation against libvirt's
// in-process test driver: every call reaches real libvirt code and the states
// come back through GetState.
func TestLibvirtLifecycle(t *testing.T) {
	c, err := DialURI("test:///default")
	if err != nil {
		t.Skipf("libvirt test driver unavailable: %v", err)
	}
	defer c.Close()

	events := make(chan Event, 100)
	stop, err := c.Watch(func(e Event) { events <- e })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	if _, err := c.Info("ns_vmi"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Info of a missing domain: err = %v, want ErrNotFound", err)
	}
	if err := c.Define([]byte(testDomainXML)); err != nil {
		t.Fatal(err)
	}
	// libvirt's test driver refuses VIR_DOMAIN_START_PAUSED: a paused start is tested on real
	// libvirt and QEMU (test/e2e/node, TestNodeAgentOnRealLibvirt).
	start := func(name string) error { return c.Start(name, false) }
	steps := []struct {
		name string
		do   func(string) error
		want DomainInfo
	}{
		{"start", start, DomainInfo{Name: "ns_vmi", State: StateRunning, Reason: ReasonUnknown, UID: "uid-123"}},
		{"pause", c.Pause, DomainInfo{Name: "ns_vmi", State: StatePaused, Reason: ReasonUser, UID: "uid-123"}},
		{"resume", c.Resume, DomainInfo{Name: "ns_vmi", State: StateRunning, Reason: ReasonUnknown, UID: "uid-123"}},
		{"shutdown", c.Shutdown, DomainInfo{Name: "ns_vmi", State: StateShutoff, Reason: ReasonShutdown, UID: "uid-123"}},
		{"start again", start, DomainInfo{Name: "ns_vmi", State: StateRunning, Reason: ReasonUnknown, UID: "uid-123"}},
		{"destroy", c.Destroy, DomainInfo{Name: "ns_vmi", State: StateShutoff, Reason: ReasonDestroyed, UID: "uid-123"}},
	}
	for _, s := range steps {
		if err := s.do("ns_vmi"); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if s.name == "start" {
			// The test driver's guests run no guest agent (it cannot answer at all).
			if _, err := c.GuestInfo("ns_vmi"); !errors.Is(err, ErrNoGuestAgent) {
				t.Errorf("GuestInfo of a guest without an agent: err = %v, want ErrNoGuestAgent", err)
			}
			if err := c.SetAuthorizedKeys("ns_vmi", "fedora", []string{"ssh-ed25519 AAAA"}); !errors.Is(err, ErrNoGuestAgent) {
				t.Errorf("SetAuthorizedKeys without an agent: err = %v, want ErrNoGuestAgent", err)
			}
			// The test driver sets passwords itself (QEMU's asks the agent).
			if err := c.SetUserPassword("ns_vmi", "fedora", "pw"); err != nil {
				t.Errorf("SetUserPassword on the test driver: %v", err)
			}
			// The test driver's screen is a PNG image (QEMU's is a PPM).
			mime, img, err := c.Screenshot("ns_vmi")
			if err != nil {
				t.Errorf("Screenshot: %v", err)
			} else if _, err := png.DecodeConfig(bytes.NewReader(img)); mime != "image/png" || err != nil {
				t.Errorf("Screenshot: %s of %d bytes (%v), want a PNG image", mime, len(img), err)
			}
		}
		got, err := c.Info("ns_vmi")
		if err != nil {
			t.Fatalf("%s: Info: %v", s.name, err)
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("after %s (-want +got):\n%s", s.name, diff)
		}
	}
	select {
	case e := <-events:
		if e.Domain != "ns_vmi" {
			t.Errorf("event for %q, want ns_vmi", e.Domain)
		}
	case <-time.After(5 * time.Second):
		t.Error("no lifecycle event within 5s")
	}
	if err := c.Undefine("ns_vmi"); err != nil {
		t.Fatal(err)
	}
	if err := c.Start("ns_vmi", false); !errors.Is(err, ErrNotFound) {
		t.Errorf("Start after Undefine: err = %v, want ErrNotFound", err)
	}
}

func TestMetadataUID(t *testing.T) {
	tests := []struct {
		name, xml, want string
	}{
		{"namespaced element", testDomainXML, "uid-123"},
		{"attribute", `<domain><name>x</name><metadata><nv:vmi xmlns:nv="urn:x" uid="u-9"/></metadata></domain>`, "u-9"},
		{"no metadata", `<domain><name>x</name><uid>not-me</uid></domain>`, ""},
		{"metadata without uid", `<domain><metadata><a>b</a></metadata><devices><uid>nope</uid></devices></domain>`, ""},
		{"garbage", `<domain><metadata>`, ""},
	}
	for _, tt := range tests {
		if got := MetadataUID([]byte(tt.xml)); got != tt.want {
			t.Errorf("%s: MetadataUID = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestLibvirtNotes: notes go into the running domain's metadata and come back; removing one
// leaves none.
func TestLibvirtNotes(t *testing.T) {
	c, err := DialURI("test:///default")
	if err != nil {
		t.Skipf("libvirt test driver unavailable: %v", err)
	}
	defer c.Close()
	// test:///default starts with a running domain named "test".
	if got, err := c.Note("test", "thaw-at"); err != nil || got != "" {
		t.Fatalf("note before any: %q, %v; want none", got, err)
	}
	if err := c.SetNote("test", "thaw-at", "2026-11-23T04:00:00Z"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Note("test", "thaw-at"); err != nil || got != "2026-11-23T04:00:00Z" {
		t.Errorf("note %q, %v; want the stored time", got, err)
	}
	if err := c.SetNote("test", "thaw-at", ""); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Note("test", "thaw-at"); err != nil || got != "" {
		t.Errorf("note after removal %q, %v; want none", got, err)
	}
	if _, err := c.Note("missing", "thaw-at"); !errors.Is(err, ErrNotFound) {
		t.Errorf("note of a missing domain: %v, want ErrNotFound", err)
	}
	// The test driver's domain has no counters to speak of, but the call goes through.
	if _, err := c.Stats("test"); err != nil {
		t.Errorf("stats of the test domain: %v", err)
	}
	if _, err := c.Stats("missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("stats of a missing domain: %v, want ErrNotFound", err)
	}
}
