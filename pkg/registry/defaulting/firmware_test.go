package defaulting

import (
	"testing"

	"github.com/google/uuid"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestFirmwareUUID(t *testing.T) {
	a := FirmwareUUID("ns", "vm")
	if a != FirmwareUUID("ns", "vm") {
		t.Fatalf("not stable")
	}
	if _, err := uuid.Parse(string(a)); err != nil {
		t.Fatalf("not a UUID: %q", a)
	}
	for _, other := range [][2]string{{"ns2", "vm"}, {"ns", "vm2"}, {"n", "svm"}} {
		if FirmwareUUID(other[0], other[1]) == a {
			t.Errorf("%v collides with ns/vm", other)
		}
	}
	// Fixed forever: a change would give every existing guest a new SMBIOS UUID.
	if got := FirmwareUUID("default", "vm-cirros"); got != "9609f054-dfbb-573d-ad37-2a6e8d7db726" {
		t.Errorf("FirmwareUUID(default, vm-cirros) = %s changed", got)
	}
}

func TestSetFirmwareUUID(t *testing.T) {
	spec := &kubevirtv1.VirtualMachineInstanceSpec{}
	SetFirmwareUUID(spec, "ns", "vm", "")
	if spec.Domain.Firmware.UUID != FirmwareUUID("ns", "vm") {
		t.Errorf("derived uuid not set")
	}
	spec = &kubevirtv1.VirtualMachineInstanceSpec{}
	SetFirmwareUUID(spec, "ns", "vm", "prev")
	if spec.Domain.Firmware.UUID != "prev" {
		t.Errorf("previous uuid not kept: %q", spec.Domain.Firmware.UUID)
	}
	spec.Domain.Firmware.UUID = "user-set"
	SetFirmwareUUID(spec, "ns", "vm", "prev")
	if spec.Domain.Firmware.UUID != "user-set" {
		t.Errorf("user uuid overwritten: %q", spec.Domain.Firmware.UUID)
	}
}
