package validation

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// instancetypeUses sets one unsupported feature on an empty instance type spec, keyed by the
// documented path.
var instancetypeUses = map[string]func(s *instancetypev1beta1.VirtualMachineInstancetypeSpec){
	"spec.gpus": func(s *instancetypev1beta1.VirtualMachineInstancetypeSpec) {
		s.GPUs = []kubevirtv1.GPU{{Name: "gpu1", DeviceName: "nvidia.com/TU104GL"}}
	},
	"spec.hostDevices": func(s *instancetypev1beta1.VirtualMachineInstancetypeSpec) {
		s.HostDevices = []kubevirtv1.HostDevice{{Name: "dev1", DeviceName: "intel.com/qat"}}
	},
	"spec.cpu.dedicatedCPUPlacement": func(s *instancetypev1beta1.VirtualMachineInstancetypeSpec) {
		s.CPU.DedicatedCPUPlacement = ptr(true)
	},
	"spec.cpu.isolateEmulatorThread": func(s *instancetypev1beta1.VirtualMachineInstancetypeSpec) {
		s.CPU.IsolateEmulatorThread = ptr(true)
	},
	"spec.cpu.numa": func(s *instancetypev1beta1.VirtualMachineInstancetypeSpec) {
		s.CPU.NUMA = &kubevirtv1.NUMA{GuestMappingPassthrough: &kubevirtv1.NUMAGuestMappingPassthrough{}}
	},
	"spec.cpu.realtime": func(s *instancetypev1beta1.VirtualMachineInstancetypeSpec) {
		s.CPU.Realtime = &kubevirtv1.Realtime{Mask: "0-1"}
	},
	"spec.memory.hugepages": func(s *instancetypev1beta1.VirtualMachineInstancetypeSpec) {
		s.Memory.Hugepages = &kubevirtv1.Hugepages{PageSize: "2Mi"}
	},
	"spec.launchSecurity": func(s *instancetypev1beta1.VirtualMachineInstancetypeSpec) {
		s.LaunchSecurity = &kubevirtv1.LaunchSecurity{SEV: &kubevirtv1.SEV{}}
	},
	"spec.annotations[hooks.kubevirt.io/hookSidecars]": func(s *instancetypev1beta1.VirtualMachineInstancetypeSpec) {
		s.Annotations = map[string]string{SidecarHooksAnnotation: "[]"}
	},
}

// preferenceUses is instancetypeUses for preferences.
var preferenceUses = map[string]func(s *instancetypev1beta1.VirtualMachinePreferenceSpec){
	"spec.devices.preferredTPM.persistent": func(s *instancetypev1beta1.VirtualMachinePreferenceSpec) {
		s.Devices = &instancetypev1beta1.DevicePreferences{PreferredTPM: &kubevirtv1.TPMDevice{Persistent: ptr(true)}}
	},
	"spec.firmware.preferredEfi.persistent": func(s *instancetypev1beta1.VirtualMachinePreferenceSpec) {
		s.Firmware = &instancetypev1beta1.FirmwarePreferences{PreferredEfi: &kubevirtv1.EFI{Persistent: ptr(true)}}
	},
	"spec.devices.preferredVirtualGPUOptions": func(s *instancetypev1beta1.VirtualMachinePreferenceSpec) {
		s.Devices = &instancetypev1beta1.DevicePreferences{PreferredVirtualGPUOptions: &kubevirtv1.VGPUOptions{}}
	},
	"spec.annotations[hooks.kubevirt.io/hookSidecars]": func(s *instancetypev1beta1.VirtualMachinePreferenceSpec) {
		s.Annotations = map[string]string{SidecarHooksAnnotation: "[]"}
	},
}

// instanceFieldOf names, for each refused instance type or preference field, the refused
// instance field it would set: the two tables must not drift apart.
var instanceFieldOf = map[string]string{
	instancetypeDocKind + " spec.gpus":                                        "spec.domain.devices.gpus",
	instancetypeDocKind + " spec.hostDevices":                                 "spec.domain.devices.hostDevices",
	instancetypeDocKind + " spec.cpu.dedicatedCPUPlacement":                   "spec.domain.cpu.dedicatedCpuPlacement",
	instancetypeDocKind + " spec.cpu.isolateEmulatorThread":                   "spec.domain.cpu.isolateEmulatorThread",
	instancetypeDocKind + " spec.cpu.numa":                                    "spec.domain.cpu.numa",
	instancetypeDocKind + " spec.cpu.realtime":                                "spec.domain.cpu.realtime",
	instancetypeDocKind + " spec.memory.hugepages":                            "spec.domain.memory.hugepages",
	instancetypeDocKind + " spec.launchSecurity":                              "spec.domain.launchSecurity",
	instancetypeDocKind + " spec.annotations[hooks.kubevirt.io/hookSidecars]": "metadata.annotations[hooks.kubevirt.io/hookSidecars]",
	preferenceDocKind + " spec.devices.preferredTPM.persistent":               "spec.domain.devices.tpm.persistent",
	preferenceDocKind + " spec.firmware.preferredEfi.persistent":              "spec.domain.firmware.bootloader.efi.persistent",
	preferenceDocKind + " spec.devices.preferredVirtualGPUOptions":            "spec.domain.devices.gpus",
	preferenceDocKind + " spec.annotations[hooks.kubevirt.io/hookSidecars]":   "metadata.annotations[hooks.kubevirt.io/hookSidecars]",
}

// TestEveryUnsupportedInstancetypeFieldIsRefused sets each documented field on an empty spec and
// expects exactly one Forbidden error there, worded as the instance's errors are.
func TestEveryUnsupportedInstancetypeFieldIsRefused(t *testing.T) {
	tested := 0
	for _, u := range UnsupportedInstancetypeFields() {
		t.Run(u.Kind+" "+u.Path, func(t *testing.T) {
			var errs field.ErrorList
			switch u.Kind {
			case instancetypeDocKind:
				set, ok := instancetypeUses[u.Path]
				if !ok {
					t.Fatalf("no test case for %s", u.Path)
				}
				spec := &instancetypev1beta1.VirtualMachineInstancetypeSpec{}
				set(spec)
				errs = CheckUnsupportedInstancetypeSpec(spec, field.NewPath("spec"))
			case preferenceDocKind:
				set, ok := preferenceUses[u.Path]
				if !ok {
					t.Fatalf("no test case for %s", u.Path)
				}
				spec := &instancetypev1beta1.VirtualMachinePreferenceSpec{}
				set(spec)
				errs = CheckUnsupportedPreferenceSpec(spec, field.NewPath("spec"))
			default:
				t.Fatalf("unexpected kind %q", u.Kind)
			}
			tested++
			compareErrs(t, []string{"Forbidden:" + u.Path}, errs)
			if len(errs) == 1 {
				if want := u.Path + ": Forbidden: " + u.Feature + " is not supported by NativeVirt yet"; errs[0].Error() != want {
					t.Errorf("message = %q, want %q", errs[0].Error(), want)
				}
			}
		})
	}
	if want := len(instancetypeUses) + len(preferenceUses); tested != want {
		t.Errorf("%d documented fields, %d test cases", tested, want)
	}
}

// TestUnsupportedInstancetypeFieldsMirrorTheInstance: each refused instance type or preference
// field sets an instance field that the instance's table refuses too.
func TestUnsupportedInstancetypeFieldsMirrorTheInstance(t *testing.T) {
	refusedInInstance := map[string]bool{}
	for _, u := range UnsupportedFields() {
		if u.Kind == "VirtualMachineInstance" {
			refusedInInstance[u.Path] = true
		}
	}
	var documented []string
	for _, u := range UnsupportedInstancetypeFields() {
		key := u.Kind + " " + u.Path
		documented = append(documented, key)
		instancePath, ok := instanceFieldOf[key]
		if !ok {
			t.Errorf("%s: which instance field does it set? (add it to instanceFieldOf)", key)
			continue
		}
		if !refusedInInstance[instancePath] {
			t.Errorf("%s is refused, but the instance field it sets (%s) is not", key, instancePath)
		}
	}
	var mapped []string
	for key := range instanceFieldOf {
		mapped = append(mapped, key)
	}
	sort.Strings(mapped)
	sort.Strings(documented)
	if diff := cmp.Diff(mapped, documented); diff != "" {
		t.Errorf("instanceFieldOf and the documented fields differ (-mapped +documented):\n%s", diff)
	}
}

// TestUnsupportedInstancetypeFieldsAcceptWhatAsksForNothing: a false flag or a disabled TPM
// asks for nothing and is accepted, as in an instance.
func TestUnsupportedInstancetypeFieldsAcceptWhatAsksForNothing(t *testing.T) {
	it := &instancetypev1beta1.VirtualMachineInstancetypeSpec{}
	it.CPU.DedicatedCPUPlacement = ptr(false)
	it.CPU.IsolateEmulatorThread = ptr(false)
	compareErrs(t, nil, CheckUnsupportedInstancetypeSpec(it, field.NewPath("spec")))

	pref := &instancetypev1beta1.VirtualMachinePreferenceSpec{
		Devices:  &instancetypev1beta1.DevicePreferences{PreferredTPM: &kubevirtv1.TPMDevice{Enabled: ptr(false), Persistent: ptr(true)}},
		Firmware: &instancetypev1beta1.FirmwarePreferences{PreferredEfi: &kubevirtv1.EFI{Persistent: ptr(false)}},
	}
	compareErrs(t, nil, CheckUnsupportedPreferenceSpec(pref, field.NewPath("spec")))
	compareErrs(t, nil, CheckUnsupportedInstancetypeSpec(nil, field.NewPath("spec")))
	compareErrs(t, nil, CheckUnsupportedPreferenceSpec(nil, field.NewPath("spec")))
}
