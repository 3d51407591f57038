package instancetype

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// applyPreference fills what the instance leaves unset with the preference's values, in the order
// of KubeVirt's pkg/instancetype/preference/apply/vmi.go. A preference never replaces a value the
// template sets; where KubeVirt 1.7 does (ACPI, disableHotplug: fields without an unset state)
// this package keeps the template's value instead, see applyFeaturePreferences and
// applyDevicePreferences. A preference for a field the instance does not have yet allocates only
// what it fills: no empty firmware, clock or features block is left behind.
func applyPreference(pref *instancetypev1beta1.VirtualMachinePreferenceSpec, meta *metav1.ObjectMeta, spec *kubevirtv1.VirtualMachineInstanceSpec) {
	applyCPUFeaturePreferences(pref, spec)
	applyDevicePreferences(pref, spec)
	applyFeaturePreferences(pref, spec)
	applyFirmwarePreferences(pref, spec)
	applyMachinePreferences(pref, spec)
	applyClockPreferences(pref, spec)
	if pref.PreferredSubdomain != nil && spec.Subdomain == "" {
		spec.Subdomain = *pref.PreferredSubdomain
	}
	if pref.PreferredTerminationGracePeriodSeconds != nil && spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = new(*pref.PreferredTerminationGracePeriodSeconds)
	}
	if a := pref.PreferredArchitecture; a != nil && *a != "" && spec.Architecture == "" {
		spec.Architecture = *a
	}
	applyPreferenceAnnotations(pref.Annotations, meta)
}

// applyCPUFeaturePreferences adds the preferred CPU features whose names the template's features
// do not name; a feature the template names keeps the template's policy. As in KubeVirt
// (pkg/instancetype/preference/apply/cpu.go) only the template's names are looked at, so the
// preference's own list is added as it is, in its order.
func applyCPUFeaturePreferences(pref *instancetypev1beta1.VirtualMachinePreferenceSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) {
	if pref.CPU == nil || len(pref.CPU.PreferredCPUFeatures) == 0 {
		return
	}
	named := map[string]bool{}
	if spec.Domain.CPU != nil {
		for _, f := range spec.Domain.CPU.Features {
			named[f.Name] = true
		}
	}
	for _, f := range pref.CPU.PreferredCPUFeatures {
		if named[f.Name] {
			continue
		}
		if spec.Domain.CPU == nil {
			spec.Domain.CPU = &kubevirtv1.CPU{}
		}
		spec.Domain.CPU.Features = append(spec.Domain.CPU.Features, f)
	}
}

// applyMachinePreferences sets the preferred machine type where the template names none
// (pkg/instancetype/preference/apply/machine.go).
func applyMachinePreferences(pref *instancetypev1beta1.VirtualMachinePreferenceSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) {
	if pref.Machine == nil || pref.Machine.PreferredMachineType == "" {
		return
	}
	if spec.Domain.Machine == nil {
		spec.Domain.Machine = &kubevirtv1.Machine{}
	}
	if spec.Domain.Machine.Type == "" {
		spec.Domain.Machine.Type = pref.Machine.PreferredMachineType
	}
}

// applyClockPreferences sets the preferred clock offset where the template has neither a UTC
// nor a timezone offset (never half of one over the other), and the preferred timers where the
// template has none (pkg/instancetype/preference/apply/clock.go).
func applyClockPreferences(pref *instancetypev1beta1.VirtualMachinePreferenceSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) {
	if pref.Clock == nil {
		return
	}
	clock := spec.Domain.Clock
	if clock == nil {
		clock = &kubevirtv1.Clock{}
	}
	if pref.Clock.PreferredClockOffset != nil && clock.UTC == nil && clock.Timezone == nil {
		clock.ClockOffset = *pref.Clock.PreferredClockOffset.DeepCopy()
	}
	if pref.Clock.PreferredTimer != nil && clock.Timer == nil {
		clock.Timer = pref.Clock.PreferredTimer.DeepCopy()
	}
	if spec.Domain.Clock == nil && *clock != (kubevirtv1.Clock{}) {
		spec.Domain.Clock = clock
	}
}
