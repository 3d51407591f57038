package validation

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// This file is the single list of KubeVirt fields that NativeVirt models (so that KubeVirt
// manifests decode) but refuses because it does not implement them yet. Every entry becomes a
// Forbidden error naming the field and a row of docs/api-support.md (a unit test keeps the two
// in step). Silently ignoring such a field would start a guest that is not what was asked for.

// notSupportedYet is the detail of every error raised from the tables below.
const notSupportedYet = "is not supported by NativeVirt yet"

// SidecarHooksAnnotation is KubeVirt's annotation that asks for hook sidecar containers in the
// launcher pod. NativeVirt does not run sidecars, so the annotation is refused.
const SidecarHooksAnnotation = "hooks.kubevirt.io/hookSidecars"

// UnsupportedField describes one modelled but unsupported field, for documentation.
type UnsupportedField struct {
	// Kind is the kind whose objects carry the field. Fields of a VirtualMachineInstance's spec
	// or metadata are refused in VirtualMachine and VirtualMachineInstanceReplicaSet templates
	// too, under spec.template.
	Kind string
	// Path is the field's path in an object of Kind; [*] stands for any list entry.
	Path string
	// Feature names the feature in words, as the error message does.
	Feature string
}

// unsupported is a field of objects of type T that NativeVirt refuses when used reports it set.
type unsupported[T any] struct {
	// field is the dotted JSON path below T.
	field string
	// feature names the feature; errors read "<feature> is not supported by NativeVirt yet".
	feature string
	// used reports whether obj uses the feature. It must be nil-safe.
	used func(obj *T) bool
}

// check returns one Forbidden error per table entry that obj uses.
func check[T any](table []unsupported[T], obj *T, path *field.Path) field.ErrorList {
	if obj == nil {
		return nil
	}
	var errs field.ErrorList
	for _, entry := range table {
		if entry.used(obj) {
			errs = append(errs, field.Forbidden(childPath(path, entry.field), entry.feature+" "+notSupportedYet))
		}
	}
	return errs
}

// childPath extends path by a dotted JSON path such as "domain.devices.gpus".
func childPath(path *field.Path, dotted string) *field.Path {
	for _, name := range strings.Split(dotted, ".") {
		path = path.Child(name)
	}
	return path
}

type (
	vmiSpec  = kubevirtv1.VirtualMachineInstanceSpec
	disk     = kubevirtv1.Disk
	volume   = kubevirtv1.Volume
	iface    = kubevirtv1.Interface
	network  = kubevirtv1.Network
	vmSpec   = kubevirtv1.VirtualMachineSpec
	vmimSpec = kubevirtv1.VirtualMachineInstanceMigrationSpec
)

// unsupportedVMISpecFields are refused wherever a VirtualMachineInstance spec appears.
var unsupportedVMISpecFields = []unsupported[vmiSpec]{
	{"domain.devices.gpus", "GPU passthrough (devices.gpus)", func(s *vmiSpec) bool { return len(s.Domain.Devices.GPUs) > 0 }},
	{"domain.devices.hostDevices", "host device passthrough (devices.hostDevices)", func(s *vmiSpec) bool { return len(s.Domain.Devices.HostDevices) > 0 }},
	{"domain.devices.filesystems", "virtiofs filesystems (devices.filesystems)", func(s *vmiSpec) bool { return len(s.Domain.Devices.Filesystems) > 0 }},
	{"domain.devices.tpm.persistent", "a persistent TPM (tpm.persistent; the TPM's state lives as long as the pod)", func(s *vmiSpec) bool {
		tpm := s.Domain.Devices.TPM
		return tpm != nil && (tpm.Enabled == nil || *tpm.Enabled) && tpm.Persistent != nil && *tpm.Persistent
	}},
	{"domain.devices.clientPassthrough", "USB client passthrough (devices.clientPassthrough)", func(s *vmiSpec) bool { return s.Domain.Devices.ClientPassthrough != nil }},
	{"domain.devices.downwardMetrics", "the downward metrics device (devices.downwardMetrics)", func(s *vmiSpec) bool { return s.Domain.Devices.DownwardMetrics != nil }},
	{"domain.cpu.dedicatedCpuPlacement", "dedicated CPU placement (cpu.dedicatedCpuPlacement)", func(s *vmiSpec) bool { return s.Domain.CPU != nil && s.Domain.CPU.DedicatedCPUPlacement }},
	{"domain.cpu.isolateEmulatorThread", "an isolated emulator thread (cpu.isolateEmulatorThread)", func(s *vmiSpec) bool { return s.Domain.CPU != nil && s.Domain.CPU.IsolateEmulatorThread }},
	{"domain.cpu.numa", "guest NUMA topology (cpu.numa)", func(s *vmiSpec) bool { return s.Domain.CPU != nil && s.Domain.CPU.NUMA != nil }},
	{"domain.cpu.realtime", "realtime tuning (cpu.realtime)", func(s *vmiSpec) bool { return s.Domain.CPU != nil && s.Domain.CPU.Realtime != nil }},
	{"domain.memory.hugepages", "huge pages (memory.hugepages)", func(s *vmiSpec) bool { return s.Domain.Memory != nil && s.Domain.Memory.Hugepages != nil }},
	{"domain.firmware.bootloader.efi.persistent", "persistent EFI variables (efi.persistent)", func(s *vmiSpec) bool {
		efi := efiOf(s)
		return efi != nil && efi.Persistent != nil && *efi.Persistent
	}},
	{"domain.launchSecurity", "confidential computing (domain.launchSecurity)", func(s *vmiSpec) bool { return s.Domain.LaunchSecurity != nil }},
	{"resourceClaims", "dynamic resource claims (resourceClaims)", func(s *vmiSpec) bool { return len(s.ResourceClaims) > 0 }},
}

// unsupportedDiskFields are refused on any entry of spec.domain.devices.disks.
var unsupportedDiskFields = []unsupported[disk]{
	{"lun", "a LUN disk (lun)", func(d *disk) bool { return d.LUN != nil }},
}

// unsupportedVolumeFields are refused on any entry of spec.volumes. Ephemeral volumes stay
// allowed: they are planned and need nothing beyond a claim.
var unsupportedVolumeFields = []unsupported[volume]{
	{"downwardMetrics", "a downward metrics volume (downwardMetrics)", func(v *volume) bool { return v.DownwardMetrics != nil }},
	{"memoryDump", "a memory dump volume (memoryDump)", func(v *volume) bool { return v.MemoryDump != nil }},
	// A host disk would need a hostPath in the launcher pod: any user allowed to create VMs could read
	// or write any file of the node. KubeVirt keeps it behind a feature gate that is off by default.
	{"hostDisk", "a host disk volume (hostDisk), which would give VM users access to node files", func(v *volume) bool { return v.HostDisk != nil }},
}

// unsupportedInterfaceFields are refused on any entry of spec.domain.devices.interfaces. Other
// bindings than masquerade are refused by validateBinding with the list of supported bindings.
var unsupportedInterfaceFields = []unsupported[iface]{
	{"sriov", "the SR-IOV binding (sriov)", func(i *iface) bool { return i.SRIOV != nil }},
}

// unsupportedNetworkFields are refused on any entry of spec.networks: none today (pod and Multus
// networks are both supported).
var unsupportedNetworkFields = []unsupported[network]{}

// unsupportedVMSpecFields are refused in a VirtualMachine's spec.
var unsupportedVMSpecFields = []unsupported[vmSpec]{
	{"runStrategy", "the WaitAsReceiver run strategy (cross-cluster migration)", func(s *vmSpec) bool {
		return s.RunStrategy != nil && *s.RunStrategy == kubevirtv1.RunStrategyWaitAsReceiver
	}},
	{"updateVolumesStrategy", "volume migration (updateVolumesStrategy: Migration)", func(s *vmSpec) bool {
		return s.UpdateVolumesStrategy != nil && *s.UpdateVolumesStrategy == kubevirtv1.UpdateVolumesStrategyMigration
	}},
}

// unsupportedMigrationSpecFields are refused in a VirtualMachineInstanceMigration's spec.
var unsupportedMigrationSpecFields = []unsupported[vmimSpec]{
	{"sendTo", "cross-cluster migration (sendTo)", func(s *vmimSpec) bool { return s.SendTo != nil }},
	{"receive", "cross-cluster migration (receive)", func(s *vmimSpec) bool { return s.Receive != nil }},
}

// unsupportedAnnotations are annotation keys refused on a VirtualMachineInstance's metadata
// (and on the metadata of VirtualMachine and replica set templates), with their features.
var unsupportedAnnotations = []struct{ key, feature string }{
	{SidecarHooksAnnotation, "sidecar hooks (" + SidecarHooksAnnotation + ")"},
}

// checkAnnotations refuses the unsupported annotations present in annotations.
func checkAnnotations(annotations map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, entry := range unsupportedAnnotations {
		if _, ok := annotations[entry.key]; ok {
			errs = append(errs, field.Forbidden(path.Key(entry.key), entry.feature+" "+notSupportedYet))
		}
	}
	return errs
}

// efiOf returns the EFI bootloader of spec, or nil.
func efiOf(s *vmiSpec) *kubevirtv1.EFI {
	fw := s.Domain.Firmware
	if fw == nil || fw.Bootloader == nil {
		return nil
	}
	return fw.Bootloader.EFI
}

// UnsupportedFields lists every modelled field NativeVirt refuses, in table order. The list
// is what docs/api-support.md shows.
func UnsupportedFields() []UnsupportedField {
	const vmi, vm, vmim = "VirtualMachineInstance", "VirtualMachine", "VirtualMachineInstanceMigration"
	var out []UnsupportedField
	out = appendDocs(out, vmi, "spec", unsupportedVMISpecFields)
	out = appendDocs(out, vmi, "spec.domain.devices.disks[*]", unsupportedDiskFields)
	out = appendDocs(out, vmi, "spec.volumes[*]", unsupportedVolumeFields)
	out = appendDocs(out, vmi, "spec.domain.devices.interfaces[*]", unsupportedInterfaceFields)
	out = appendDocs(out, vmi, "spec.networks[*]", unsupportedNetworkFields)
	for _, entry := range unsupportedAnnotations {
		out = append(out, UnsupportedField{Kind: vmi, Path: "metadata.annotations[" + entry.key + "]", Feature: entry.feature})
	}
	out = appendDocs(out, vm, "spec", unsupportedVMSpecFields)
	out = appendDocs(out, vmim, "spec", unsupportedMigrationSpecFields)
	return out
}

// appendDocs adds the entries of table, with their paths below prefix, to out.
func appendDocs[T any](out []UnsupportedField, kind, prefix string, table []unsupported[T]) []UnsupportedField {
	for _, entry := range table {
		out = append(out, UnsupportedField{Kind: kind, Path: prefix + "." + entry.field, Feature: entry.feature})
	}
	return out
}
