package instancetype

import (
	"testing"

	v1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func featuresSpec(f *kubevirtv1.Features) kubevirtv1.VirtualMachineInstanceSpec {
	return kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Features: f}}
}

func TestFeaturePreferences(t *testing.T) {
	on := kubevirtv1.FeatureState{Enabled: new(true)}
	off := kubevirtv1.FeatureState{Enabled: new(false)}
	hyperv := &kubevirtv1.FeatureHyperv{
		Relaxed: &on, VAPIC: &on, Spinlocks: &kubevirtv1.FeatureSpinlocks{Retries: new(int32(8191))}, VPIndex: &on,
		Runtime: &on, SyNIC: &on, SyNICTimer: &kubevirtv1.SyNICTimer{Direct: &on}, Reset: &on,
		VendorID: &kubevirtv1.FeatureVendorID{VendorID: "KubeVirt"}, Frequencies: &on, Reenlightenment: &on,
		TLBFlush: &on, IPI: &on, EVMCS: &on,
	}
	all := v1beta1.VirtualMachinePreferenceSpec{Features: &v1beta1.FeaturePreferences{
		PreferredAcpi:       &on,
		PreferredApic:       &kubevirtv1.FeatureAPIC{EndOfInterrupt: true},
		PreferredHyperv:     hyperv,
		PreferredKvm:        &kubevirtv1.FeatureKVM{Hidden: true},
		PreferredPvspinlock: &on,
		PreferredSmm:        &on,
	}}
	set := &kubevirtv1.Features{
		ACPI: off, APIC: &kubevirtv1.FeatureAPIC{Enabled: new(false)}, KVM: &kubevirtv1.FeatureKVM{},
		Pvspinlock: &off, SMM: &off, Hyperv: &kubevirtv1.FeatureHyperv{
			Relaxed: &off, VAPIC: &off, Spinlocks: &kubevirtv1.FeatureSpinlocks{}, VPIndex: &off,
			Runtime: &off, SyNIC: &off, SyNICTimer: &kubevirtv1.SyNICTimer{}, Reset: &off,
			VendorID: &kubevirtv1.FeatureVendorID{}, Frequencies: &off, Reenlightenment: &off,
			TLBFlush: &off, IPI: &off, EVMCS: &off,
		},
	}
	runPrefCases(t, []prefCase{
		{
			name: "filled where unset", pref: all,
			want: featuresSpec(&kubevirtv1.Features{
				ACPI: on, APIC: &kubevirtv1.FeatureAPIC{EndOfInterrupt: true}, Hyperv: hyperv,
				KVM: &kubevirtv1.FeatureKVM{Hidden: true}, Pvspinlock: &on, SMM: &on,
			}),
		},
		{name: "never override what the template sets", pref: all, spec: featuresSpec(set), want: featuresSpec(set)},
		{
			name: "acpi with enabled unset takes the preference", pref: all,
			spec: featuresSpec(&kubevirtv1.Features{ACPI: kubevirtv1.FeatureState{}, KVM: &kubevirtv1.FeatureKVM{}}),
			want: featuresSpec(&kubevirtv1.Features{
				ACPI: on, APIC: &kubevirtv1.FeatureAPIC{EndOfInterrupt: true}, Hyperv: hyperv,
				KVM: &kubevirtv1.FeatureKVM{}, Pvspinlock: &on, SMM: &on,
			}),
		},
		{
			name: "hyper-v enlightenments filled one by one",
			pref: v1beta1.VirtualMachinePreferenceSpec{Features: &v1beta1.FeaturePreferences{PreferredHyperv: hyperv}},
			spec: featuresSpec(&kubevirtv1.Features{Hyperv: &kubevirtv1.FeatureHyperv{Relaxed: &off, EVMCS: &off}}),
			want: featuresSpec(&kubevirtv1.Features{Hyperv: &kubevirtv1.FeatureHyperv{
				Relaxed: &off, VAPIC: &on, Spinlocks: &kubevirtv1.FeatureSpinlocks{Retries: new(int32(8191))}, VPIndex: &on,
				Runtime: &on, SyNIC: &on, SyNICTimer: &kubevirtv1.SyNICTimer{Direct: &on}, Reset: &on,
				VendorID: &kubevirtv1.FeatureVendorID{VendorID: "KubeVirt"}, Frequencies: &on, Reenlightenment: &on,
				TLBFlush: &on, IPI: &on, EVMCS: &off,
			}}),
		},
		{
			name: "hyper-v preferences are added under hypervPassthrough as in KubeVirt 1.7",
			pref: v1beta1.VirtualMachinePreferenceSpec{Features: &v1beta1.FeaturePreferences{PreferredHyperv: &kubevirtv1.FeatureHyperv{Relaxed: &on}}},
			spec: featuresSpec(&kubevirtv1.Features{HypervPassthrough: &kubevirtv1.HyperVPassthrough{Enabled: new(true)}}),
			want: featuresSpec(&kubevirtv1.Features{
				HypervPassthrough: &kubevirtv1.HyperVPassthrough{Enabled: new(true)},
				Hyperv:            &kubevirtv1.FeatureHyperv{Relaxed: &on},
			}),
		},
		{
			name: "empty preferences leave no features block",
			pref: v1beta1.VirtualMachinePreferenceSpec{Features: &v1beta1.FeaturePreferences{PreferredHyperv: &kubevirtv1.FeatureHyperv{}}},
		},
	})
}
