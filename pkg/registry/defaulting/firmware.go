// Package defaulting holds the defaults that need request context (namespace and name), which
// the scheme's defaulters never see. Static defaults live with the types (pkg/apis/kubevirt/v1).
package defaulting

import (
	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// firmwareNamespace seeds the name-based (SHA-1, version 5) firmware UUIDs. Changing it would
// change the UUID every existing VM presents to its guest, so it is fixed forever.
var firmwareNamespace = uuid.MustParse("6a1a24a1-4061-4607-8bf4-a3963d0c5895")

// FirmwareUUID is the stable firmware UUID of the VM (or standalone VMI) namespace/name. A guest
// keeps seeing the same SMBIOS UUID across restarts, and re-creating the VM keeps it too.
func FirmwareUUID(namespace, name string) types.UID {
	return types.UID(uuid.NewSHA1(firmwareNamespace, []byte(namespace+"/"+name)).String())
}

// SetFirmwareUUID fills spec.domain.firmware.uuid when it is unset. previous is the UUID the
// object had before an update ("" on create): an update that drops the field keeps the old one.
func SetFirmwareUUID(spec *kubevirtv1.VirtualMachineInstanceSpec, namespace, name string, previous types.UID) {
	if spec.Domain.Firmware == nil {
		spec.Domain.Firmware = &kubevirtv1.Firmware{}
	}
	if spec.Domain.Firmware.UUID != "" {
		return
	}
	if previous != "" {
		spec.Domain.Firmware.UUID = previous
		return
	}
	spec.Domain.Firmware.UUID = FirmwareUUID(namespace, name)
}

// FirmwareUUIDOf returns the firmware UUID set in spec, or "".
func FirmwareUUIDOf(spec *kubevirtv1.VirtualMachineInstanceSpec) types.UID {
	if spec == nil || spec.Domain.Firmware == nil {
		return ""
	}
	return spec.Domain.Firmware.UUID
}
