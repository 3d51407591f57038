package convert

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// enabled reads a tri-state: unset means on.
func enabled(b *bool) bool {
	return b == nil || *b
}

// onOff renders a boolean as libvirt's on/off.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// state converts a KubeVirt feature state (unset means on) to libvirt's.
func state(f *kubevirtv1.FeatureState) *FeatureState {
	if f == nil {
		return nil
	}
	return &FeatureState{State: onOff(enabled(f.Enabled))}
}

// convertFeatures gives the domain's <features>. ACPI is on unless turned
// off, as the graceful shutdown of the guest depends on it.
func convertFeatures(spec *kubevirtv1.DomainSpec, p *field.Path) (*Features, field.ErrorList) {
	f := spec.Features
	if f == nil {
		return &Features{ACPI: &struct{}{}}, nil
	}
	out := &Features{}
	if enabled(f.ACPI.Enabled) {
		out.ACPI = &struct{}{}
	}
	if f.APIC != nil && enabled(f.APIC.Enabled) {
		out.APIC = &FeatureAPIC{}
		if f.APIC.EndOfInterrupt {
			out.APIC.EOI = "on"
		}
	}
	out.SMM = state(f.SMM)
	out.PVSpinlock = state(f.Pvspinlock)
	if f.KVM != nil && f.KVM.Hidden {
		out.KVM = &FeatureKVM{Hidden: &FeatureState{State: "on"}}
	}
	var errs field.ErrorList
	switch {
	case f.HypervPassthrough != nil && enabled(f.HypervPassthrough.Enabled):
		if f.Hyperv != nil {
			errs = append(errs, field.Invalid(p.Child("features", "hyperv"), "hyperv", "hyperv and hypervPassthrough exclude each other"))
		}
		out.HyperV = &FeatureHyperV{Mode: "passthrough"}
	case f.Hyperv != nil:
		hv, hvErrs := convertHyperV(f.Hyperv, p.Child("features", "hyperv"))
		out.HyperV, errs = hv, append(errs, hvErrs...)
	}
	return out, errs
}

// convertHyperV gives the listed Hyper-V enlightenments.
func convertHyperV(h *kubevirtv1.FeatureHyperv, p *field.Path) (*FeatureHyperV, field.ErrorList) {
	var errs field.ErrorList
	out := &FeatureHyperV{
		Mode:            "custom",
		Relaxed:         state(h.Relaxed),
		VAPIC:           state(h.VAPIC),
		VPIndex:         state(h.VPIndex),
		Runtime:         state(h.Runtime),
		SyNIC:           state(h.SyNIC),
		Reset:           state(h.Reset),
		Frequencies:     state(h.Frequencies),
		Reenlightenment: state(h.Reenlightenment),
		TLBFlush:        state(h.TLBFlush),
		IPI:             state(h.IPI),
		EVMCS:           state(h.EVMCS),
	}
	if s := h.Spinlocks; s != nil {
		out.Spinlocks = &FeatureSpinlocks{State: onOff(enabled(s.Enabled))}
		if enabled(s.Enabled) {
			retries := int32(4096)
			if s.Retries != nil {
				retries = *s.Retries
			}
			if retries < 4096 {
				errs = append(errs, field.Invalid(p.Child("spinlocks", "spinlocks"), retries, "must be at least 4096"))
			}
			out.Spinlocks.Retries = uint32(max(retries, 0))
		}
	}
	if t := h.SyNICTimer; t != nil {
		out.STimer = &FeatureSTimer{State: onOff(enabled(t.Enabled)), Direct: state(t.Direct)}
	}
	if v := h.VendorID; v != nil {
		out.VendorID = &FeatureVendorID{State: onOff(enabled(v.Enabled))}
		if enabled(v.Enabled) {
			if v.VendorID == "" || len(v.VendorID) > 12 {
				errs = append(errs, field.Invalid(p.Child("vendorid", "vendorid"), v.VendorID, "must be 1 to 12 characters"))
			}
			out.VendorID.Value = v.VendorID
		}
	}
	return out, errs
}

// TCGTranslationCacheMiB is the translation cache of an emulated (TCG) guest, in MiB: QEMU's
// default grows it up to 1 GiB (an eighth of the host's RAM at most), and its pages stay resident
// once translated code filled them, so an emulated guest's launcher would outgrow its memory
// request over time. 32 MiB was QEMU's default before 5.0. Measured with the demo guest booting
// to its shell (QEMU 11.1): the default cache held 54 MiB after the boot, 32 MiB cost ~5% more
// QEMU CPU for the boot, 16 MiB ~17% more.
const TCGTranslationCacheMiB = 32

// tcgFeatures are the emulator's settings of an emulated domain.
func tcgFeatures() *FeatureTCG {
	return &FeatureTCG{TBCache: &Size{Unit: "MiB", Value: TCGTranslationCacheMiB}}
}
