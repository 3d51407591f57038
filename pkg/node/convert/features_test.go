package convert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestConvertFeatures(t *testing.T) {
	on, off := &FeatureState{State: "on"}, &FeatureState{State: "off"}
	tests := []struct {
		name     string
		features *kubevirtv1.Features
		want     *Features
		wantErr  string
	}{{
		name: "unset: ACPI on",
		want: &Features{ACPI: &struct{}{}},
	}, {
		name:     "ACPI off",
		features: &kubevirtv1.Features{ACPI: kubevirtv1.FeatureState{Enabled: ptr(false)}},
		want:     &Features{},
	}, {
		name: "APIC with EOI, SMM, KVM hidden, pvspinlock off",
		features: &kubevirtv1.Features{
			APIC:       &kubevirtv1.FeatureAPIC{EndOfInterrupt: true},
			SMM:        &kubevirtv1.FeatureState{},
			KVM:        &kubevirtv1.FeatureKVM{Hidden: true},
			Pvspinlock: &kubevirtv1.FeatureState{Enabled: ptr(false)},
		},
		want: &Features{ACPI: &struct{}{}, APIC: &FeatureAPIC{EOI: "on"}, SMM: on, KVM: &FeatureKVM{Hidden: on}, PVSpinlock: off},
	}, {
		name:     "APIC disabled",
		features: &kubevirtv1.Features{APIC: &kubevirtv1.FeatureAPIC{Enabled: ptr(false)}},
		want:     &Features{ACPI: &struct{}{}},
	}, {
		name:     "Hyper-V passthrough",
		features: &kubevirtv1.Features{HypervPassthrough: &kubevirtv1.HyperVPassthrough{Enabled: ptr(true)}},
		want:     &Features{ACPI: &struct{}{}, HyperV: &FeatureHyperV{Mode: "passthrough"}},
	}, {
		name: "Hyper-V enlightenments",
		features: &kubevirtv1.Features{Hyperv: &kubevirtv1.FeatureHyperv{
			Relaxed:    &kubevirtv1.FeatureState{},
			VAPIC:      &kubevirtv1.FeatureState{Enabled: ptr(false)},
			Spinlocks:  &kubevirtv1.FeatureSpinlocks{},
			SyNICTimer: &kubevirtv1.SyNICTimer{Direct: &kubevirtv1.FeatureState{}},
			VendorID:   &kubevirtv1.FeatureVendorID{VendorID: "KVMKVMKVM"},
		}},
		want: &Features{ACPI: &struct{}{}, HyperV: &FeatureHyperV{
			Mode: "custom", Relaxed: on, VAPIC: off,
			Spinlocks: &FeatureSpinlocks{State: "on", Retries: 4096},
			STimer:    &FeatureSTimer{State: "on", Direct: on},
			VendorID:  &FeatureVendorID{State: "on", Value: "KVMKVMKVM"},
		}},
	}, {
		name:     "spinlock retries too low",
		features: &kubevirtv1.Features{Hyperv: &kubevirtv1.FeatureHyperv{Spinlocks: &kubevirtv1.FeatureSpinlocks{Retries: ptr(int32(100))}}},
		wantErr:  "spec.domain.features.hyperv.spinlocks.spinlocks",
	}, {
		name:     "vendor id too long",
		features: &kubevirtv1.Features{Hyperv: &kubevirtv1.FeatureHyperv{VendorID: &kubevirtv1.FeatureVendorID{VendorID: "thirteen-char"}}},
		wantErr:  "spec.domain.features.hyperv.vendorid.vendorid",
	}, {
		name: "passthrough and single enlightenments",
		features: &kubevirtv1.Features{
			HypervPassthrough: &kubevirtv1.HyperVPassthrough{Enabled: ptr(true)},
			Hyperv:            &kubevirtv1.FeatureHyperv{},
		},
		wantErr: "exclude each other",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := convertFeatures(&kubevirtv1.DomainSpec{Features: tc.features}, field.NewPath("spec", "domain"))
			checkErrs(t, errs, tc.wantErr)
			if diff := cmp.Diff(tc.want, got); tc.wantErr == "" && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
