package app

import (
	"strings"
	"testing"
)

// TestComplete: the completed configuration gives the migration controller the launcher
// configuration, and a leader election a unique identity; without leader election there is none.
func TestComplete(t *testing.T) {
	o := NewOptions()
	o.LauncherImage, o.UseEmulation = "example.org/launcher:1", true
	cfg := &Config{Launcher: o.launcherConfig(), Migration: o.Migration,
		LeaderElection: &LeaderElection{Namespace: "ns", Name: "lease"}}
	c, err := cfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if l := c.Migration.Launcher; l.LauncherImage != c.Launcher.LauncherImage || !l.UseEmulation {
		t.Errorf("migration launcher config %+v, want %+v", c.Migration.Launcher, c.Launcher)
	}
	first := c.LeaderElection.Identity
	if !strings.Contains(first, "_") {
		t.Errorf("identity %q, want <host>_<uuid>", first)
	}
	second, err := (&Config{LeaderElection: &LeaderElection{}}).Complete()
	if err != nil || second.LeaderElection.Identity == first {
		t.Errorf("a second replica's identity %q, %v; want another than %q", second.LeaderElection.Identity, err, first)
	}
	if c, err := (&Config{}).Complete(); err != nil || c.LeaderElection != nil {
		t.Errorf("without leader election: %+v, %v", c.LeaderElection, err)
	}
}
