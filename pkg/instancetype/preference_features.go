package instancetype

import (
	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// fillCopy sets *target to a deep copy of preferred when the template leaves it unset (nil).
func fillCopy[T any, P interface {
	*T
	DeepCopy() *T
}](target *P, preferred P) {
	if preferred != nil && *target == nil {
		*target = preferred.DeepCopy()
	}
}

// applyFeaturePreferences fills the hypervisor features the template leaves unset
// (KubeVirt's pkg/instancetype/preference/apply/features.go).
//
// acpi is a FeatureState held by value, so KubeVirt 1.7 overwrites it with the preference
// whenever there is one (a FIXME there). Its enabled field is a pointer, though: here the
// preference fills acpi only while enabled is unset, so a template's acpi.enabled is kept.
//
// The preferred Hyper-V enlightenments fill the template's hyperv one by one. As in KubeVirt 1.7
// they are added even when the template uses hypervPassthrough (later KubeVirt releases skip
// them then, as validation refuses both together).
func applyFeaturePreferences(pref *instancetypev1beta1.VirtualMachinePreferenceSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) {
	p := pref.Features
	if p == nil {
		return
	}
	f := spec.Domain.Features
	if f == nil {
		f = &kubevirtv1.Features{}
	}
	if p.PreferredAcpi != nil && f.ACPI.Enabled == nil {
		f.ACPI = *p.PreferredAcpi.DeepCopy()
	}
	fillCopy(&f.APIC, p.PreferredApic)
	if p.PreferredHyperv != nil {
		f.Hyperv = hypervWithPreferences(f.Hyperv, p.PreferredHyperv)
	}
	fillCopy(&f.KVM, p.PreferredKvm)
	fillCopy(&f.Pvspinlock, p.PreferredPvspinlock)
	fillCopy(&f.SMM, p.PreferredSmm)
	if spec.Domain.Features == nil && *f != (kubevirtv1.Features{}) {
		spec.Domain.Features = f
	}
}

// hypervWithPreferences returns the template's Hyper-V enlightenments (which may be nil) with the
// preferred ones it leaves unset filled in; nil when there is none at all.
func hypervWithPreferences(h, p *kubevirtv1.FeatureHyperv) *kubevirtv1.FeatureHyperv {
	out := h
	if out == nil {
		out = &kubevirtv1.FeatureHyperv{}
	}
	fillCopy(&out.EVMCS, p.EVMCS)
	fillCopy(&out.Frequencies, p.Frequencies)
	fillCopy(&out.IPI, p.IPI)
	fillCopy(&out.Reenlightenment, p.Reenlightenment)
	fillCopy(&out.Relaxed, p.Relaxed)
	fillCopy(&out.Reset, p.Reset)
	fillCopy(&out.Runtime, p.Runtime)
	fillCopy(&out.Spinlocks, p.Spinlocks)
	fillCopy(&out.SyNIC, p.SyNIC)
	fillCopy(&out.SyNICTimer, p.SyNICTimer)
	fillCopy(&out.TLBFlush, p.TLBFlush)
	fillCopy(&out.VAPIC, p.VAPIC)
	fillCopy(&out.VPIndex, p.VPIndex)
	fillCopy(&out.VendorID, p.VendorID)
	if h == nil && *out == (kubevirtv1.FeatureHyperv{}) {
		return nil
	}
	return out
}
