package qemucaps

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUsableCPUModels: the usable models of the kind asked for, without QEMU's versions,
// KubeVirt's obsolete models, max, base and host.
func TestUsableCPUModels(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tcg"), 0o755); err != nil {
		t.Fatal(err)
	}
	caps := `<qemuCaps>
  <cpu type='kvm' name='Skylake-Client' typename='x' usable='yes'/>
  <cpu type='tcg' name='max' usable='yes'/>
  <cpu type='tcg' name='host' usable='no'/>
  <cpu type='tcg' name='qemu64' usable='yes'/>
  <cpu type='tcg' name='Nehalem-v1' usable='yes'/>
  <cpu type='tcg' name='Nehalem' usable='yes'/>
  <cpu type='tcg' name='Westmere' usable='yes'/>
  <cpu type='tcg' name='Skylake-Client' usable='no'><blocker name='avx2'/></cpu>
</qemuCaps>`
	if err := os.WriteFile(filepath.Join(dir, "tcg", "caps.xml"), []byte(caps), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := UsableCPUModels(dir, "tcg")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Nehalem", "Westmere"}, got); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	if _, err := UsableCPUModels(dir, "kvm"); err == nil {
		t.Error("no error for a kind without capability files")
	}
}
