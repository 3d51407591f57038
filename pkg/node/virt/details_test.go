package virt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseDetails: the machine type, the topology (one socket per vCPU without a <topology>),
// the current memory in its unit, and the disks' devices by the VMI's names.
func TestParseDetails(t *testing.T) {
	got, err := ParseDetails([]byte(`<domain><vcpu placement="static">3</vcpu><currentMemory unit="MiB">256</currentMemory>
		<os><type arch="x86_64" machine="pc-i440fx-7.2">hvm</type></os>
		<devices><disk><target dev="sda" bus="sata"/><alias name="ua-cd"/></disk><disk><target dev="vdb"/></disk></devices></domain>`))
	if err != nil {
		t.Fatal(err)
	}
	want := DomainDetails{Machine: "pc-i440fx-7.2", Sockets: 3, Cores: 1, Threads: 1, CurrentMemory: 256 << 20,
		DiskTargets: map[string]string{"cd": "sda"}, InterfaceMACs: map[string]string{}, InterfaceTargets: map[string]string{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	if _, err := ParseDetails([]byte("<domain")); err == nil {
		t.Error("broken XML parsed")
	}
}
