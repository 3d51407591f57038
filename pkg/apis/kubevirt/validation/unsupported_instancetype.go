package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
)

// The fields of instance types and preferences (instancetype.kubevirt.io) that NativeVirt models
// but refuses. They live here, next to the instance's tables and with the same wording, because
// each one sets a field of the instances made from it: an instance type must not be accepted when
// the instance it yields would be refused. The rows join the instance's in docs/api-support.md.

type (
	instancetypeSpec = instancetypev1beta1.VirtualMachineInstancetypeSpec
	preferenceSpec   = instancetypev1beta1.VirtualMachinePreferenceSpec
)

// unsupportedInstancetypeSpecFields are refused in the spec of a VirtualMachineInstancetype and a
// VirtualMachineClusterInstancetype; each mirrors an entry of unsupportedVMISpecFields. A false
// dedicatedCPUPlacement or isolateEmulatorThread asks for nothing and is accepted, as in an
// instance.
var unsupportedInstancetypeSpecFields = []unsupported[instancetypeSpec]{
	{"gpus", "GPU passthrough (gpus)", func(s *instancetypeSpec) bool { return len(s.GPUs) > 0 }},
	{"hostDevices", "host device passthrough (hostDevices)", func(s *instancetypeSpec) bool { return len(s.HostDevices) > 0 }},
	{"cpu.dedicatedCPUPlacement", "dedicated CPU placement (cpu.dedicatedCPUPlacement)", func(s *instancetypeSpec) bool {
		return s.CPU.DedicatedCPUPlacement != nil && *s.CPU.DedicatedCPUPlacement
	}},
	{"cpu.isolateEmulatorThread", "an isolated emulator thread (cpu.isolateEmulatorThread)", func(s *instancetypeSpec) bool {
		return s.CPU.IsolateEmulatorThread != nil && *s.CPU.IsolateEmulatorThread
	}},
	{"cpu.numa", "guest NUMA topology (cpu.numa)", func(s *instancetypeSpec) bool { return s.CPU.NUMA != nil }},
	{"cpu.realtime", "realtime tuning (cpu.realtime)", func(s *instancetypeSpec) bool { return s.CPU.Realtime != nil }},
	{"memory.hugepages", "huge pages (memory.hugepages)", func(s *instancetypeSpec) bool { return s.Memory.Hugepages != nil }},
	{"launchSecurity", "confidential computing (launchSecurity)", func(s *instancetypeSpec) bool { return s.LaunchSecurity != nil }},
}

// unsupportedPreferenceSpecFields are refused in the spec of a VirtualMachinePreference and a
// VirtualMachineClusterPreference: a preferred value is copied into an instance that leaves the
// field unset, where the instance's table would refuse it.
var unsupportedPreferenceSpecFields = []unsupported[preferenceSpec]{
	{"devices.preferredTPM.persistent", "a persistent TPM (preferredTPM.persistent; the TPM's state lives as long as the pod)", func(s *preferenceSpec) bool {
		if s.Devices == nil || s.Devices.PreferredTPM == nil {
			return false
		}
		tpm := s.Devices.PreferredTPM
		return (tpm.Enabled == nil || *tpm.Enabled) && tpm.Persistent != nil && *tpm.Persistent
	}},
	{"firmware.preferredEfi.persistent", "persistent EFI variables (preferredEfi.persistent)", func(s *preferenceSpec) bool {
		return s.Firmware != nil && s.Firmware.PreferredEfi != nil && s.Firmware.PreferredEfi.Persistent != nil && *s.Firmware.PreferredEfi.Persistent
	}},
	// The options apply to virtual GPUs only, and GPUs are refused.
	{"devices.preferredVirtualGPUOptions", "virtual GPU options (preferredVirtualGPUOptions; GPUs are not supported)", func(s *preferenceSpec) bool {
		return s.Devices != nil && s.Devices.PreferredVirtualGPUOptions != nil
	}},
}

// CheckUnsupportedInstancetypeSpec refuses, with Forbidden errors below path, what an instance
// type spec asks for that NativeVirt does not implement, including spec.annotations that an
// instance refuses (the instance type's annotations become the instance's).
func CheckUnsupportedInstancetypeSpec(spec *instancetypev1beta1.VirtualMachineInstancetypeSpec, path *field.Path) field.ErrorList {
	if spec == nil {
		return nil
	}
	errs := check(unsupportedInstancetypeSpecFields, spec, path)
	return append(errs, checkAnnotations(spec.Annotations, path.Child("annotations"))...)
}

// CheckUnsupportedPreferenceSpec is CheckUnsupportedInstancetypeSpec for a preference spec.
func CheckUnsupportedPreferenceSpec(spec *instancetypev1beta1.VirtualMachinePreferenceSpec, path *field.Path) field.ErrorList {
	if spec == nil {
		return nil
	}
	errs := check(unsupportedPreferenceSpecFields, spec, path)
	return append(errs, checkAnnotations(spec.Annotations, path.Child("annotations"))...)
}

// Kinds of the instancetype.kubevirt.io documentation rows: the namespaced and the cluster-wide
// kind of each pair share one spec and one row.
const (
	instancetypeDocKind = "VirtualMachine(Cluster)Instancetype"
	preferenceDocKind   = "VirtualMachine(Cluster)Preference"
)

// UnsupportedInstancetypeFields lists the refused fields of instance types and preferences, in
// table order, for docs/api-support.md (after UnsupportedFields).
func UnsupportedInstancetypeFields() []UnsupportedField {
	var out []UnsupportedField
	out = appendDocs(out, instancetypeDocKind, "spec", unsupportedInstancetypeSpecFields)
	out = appendAnnotationDocs(out, instancetypeDocKind, "spec.annotations")
	out = appendDocs(out, preferenceDocKind, "spec", unsupportedPreferenceSpecFields)
	out = appendAnnotationDocs(out, preferenceDocKind, "spec.annotations")
	return out
}

// appendAnnotationDocs adds a row per refused annotation key of an annotations map at prefix.
func appendAnnotationDocs(out []UnsupportedField, kind, prefix string) []UnsupportedField {
	for _, entry := range unsupportedAnnotations {
		out = append(out, UnsupportedField{Kind: kind, Path: prefix + "[" + entry.key + "]", Feature: entry.feature})
	}
	return out
}
