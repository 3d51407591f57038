package qemucaps

import (
	"os"
	"path/filepath"
	"testing"
)

const capsFile = "926803a9.xml"

// node writes a node capability directory with a file of each kind named in kinds.
func node(t *testing.T, kinds ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, k := range kinds {
		if err := os.MkdirAll(filepath.Join(dir, k), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, k, capsFile), []byte("<qemuCaps>"+k+"</qemuCaps>"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func cached(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, CacheDir, capsFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestSeedWritesTheKindTheContainerNeeds(t *testing.T) {
	s := Seeder{Dir: node(t, KindKVM, KindTCG)}
	root := t.TempDir() // no /dev/kvm: emulation only
	sd, err := s.SeedRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Close()
	if sd.Kind != KindTCG || len(sd.Files) != 1 || sd.Files[0] != capsFile {
		t.Fatalf("seeded kind %q files %v, want tcg [%s]", sd.Kind, sd.Files, capsFile)
	}
	if got := cached(t, root); got != "<qemuCaps>tcg</qemuCaps>" {
		t.Errorf("cache file %q, want the node's tcg capabilities", got)
	}
	if got := sd.Outcome(); got != OutcomeNodeCache {
		t.Errorf("outcome %q with the file untouched, want %q", got, OutcomeNodeCache)
	}
	// libvirt probing anyway rewrites the file (a new one renamed over it).
	p := filepath.Join(root, CacheDir, capsFile)
	if err := os.WriteFile(p+".new", []byte("<qemuCaps>probed</qemuCaps>"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	if got := sd.Outcome(); got != OutcomeProbed {
		t.Errorf("outcome %q after libvirt rewrote the file, want %q", got, OutcomeProbed)
	}
	if matches, _ := filepath.Glob(filepath.Join(root, CacheDir, "*tmp*")); len(matches) != 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}

func TestSeedLeavesTheContainersOwnCache(t *testing.T) {
	s := Seeder{Dir: node(t, KindTCG)}
	root := t.TempDir()
	own := filepath.Join(root, CacheDir, capsFile)
	if err := os.MkdirAll(filepath.Dir(own), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, []byte("<qemuCaps>own</qemuCaps>"), 0o600); err != nil {
		t.Fatal(err)
	}
	sd, err := s.SeedRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Close()
	if len(sd.Files) != 0 || sd.Outcome() != OutcomeNone {
		t.Errorf("files %v outcome %q, want nothing written and %q", sd.Files, sd.Outcome(), OutcomeNone)
	}
	if got := cached(t, root); got != "<qemuCaps>own</qemuCaps>" {
		t.Errorf("cache file %q, want the container's own", got)
	}
}

func TestSeedWithoutCapabilitiesOfTheKind(t *testing.T) {
	s := Seeder{Dir: node(t, KindKVM)} // a node whose probe saw /dev/kvm
	root := t.TempDir()
	sd, err := s.SeedRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Close()
	if len(sd.Files) != 0 || sd.Outcome() != OutcomeNone {
		t.Errorf("files %v outcome %q for an emulation-only container, want none", sd.Files, sd.Outcome())
	}
	if _, err := os.Stat(filepath.Join(root, CacheDir, capsFile)); err == nil {
		t.Error("KVM capabilities written into a container without /dev/kvm")
	}
}

// A container that made its cache directory a link to somewhere else gets nothing written
// outside its root filesystem.
func TestSeedStaysInsideTheContainer(t *testing.T) {
	s := Seeder{Dir: node(t, KindTCG)}
	root := t.TempDir()
	outside := t.TempDir()
	parent := filepath.Join(root, filepath.Dir(CacheDir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, CacheDir)); err != nil {
		t.Fatal(err)
	}
	sd, err := s.SeedRoot(root)
	if err == nil {
		sd.Close()
		t.Error("seeding through a link out of the container succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the container: %v", entries)
	}
}
