package instancetype

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	v1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// prefCase is one preference applied to one template spec.
type prefCase struct {
	name string
	pref v1beta1.VirtualMachinePreferenceSpec
	spec kubevirtv1.VirtualMachineInstanceSpec
	want kubevirtv1.VirtualMachineInstanceSpec
}

// runPrefCases applies each case's preference (a copy, to catch aliasing) and compares the spec.
func runPrefCases(t *testing.T, cases []prefCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pref := tc.pref.DeepCopy()
			spec := *tc.spec.DeepCopy()
			applyPreference(pref, &metav1.ObjectMeta{}, &spec)
			wantSpec(t, spec, tc.want)
			if diff := cmp.Diff(&tc.pref, pref, diffOpts...); diff != "" {
				t.Errorf("the preference changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestCPUFeaturePreferences(t *testing.T) {
	feature := func(name, policy string) kubevirtv1.CPUFeature {
		return kubevirtv1.CPUFeature{Name: name, Policy: policy}
	}
	preferred := v1beta1.VirtualMachinePreferenceSpec{CPU: &v1beta1.CPUPreferences{
		PreferredCPUFeatures: []kubevirtv1.CPUFeature{feature("vmx", "require"), feature("pcid", "")}}}
	runPrefCases(t, []prefCase{
		{
			name: "added to a template without CPU", pref: preferred,
			want: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{
				Features: []kubevirtv1.CPUFeature{feature("vmx", "require"), feature("pcid", "")}}}},
		},
		{
			name: "a feature the template names keeps its policy", pref: preferred,
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{
				Model: "host-model", Features: []kubevirtv1.CPUFeature{feature("vmx", "disable")}}}},
			want: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{
				Model: "host-model", Features: []kubevirtv1.CPUFeature{feature("vmx", "disable"), feature("pcid", "")}}}},
		},
		{name: "no features leaves no CPU", pref: v1beta1.VirtualMachinePreferenceSpec{CPU: &v1beta1.CPUPreferences{}}},
	})
}

func TestMachineClockAndTopLevelPreferences(t *testing.T) {
	utc := kubevirtv1.ClockOffset{UTC: &kubevirtv1.ClockOffsetUTC{OffsetSeconds: new(int32(60))}}
	timezone := kubevirtv1.ClockOffset{Timezone: new(kubevirtv1.ClockOffsetTimezone("Europe/Berlin"))}
	timer := &kubevirtv1.Timer{HPET: &kubevirtv1.HPETTimer{Enabled: new(false)}}
	clockPref := v1beta1.VirtualMachinePreferenceSpec{Clock: &v1beta1.ClockPreferences{PreferredClockOffset: &utc, PreferredTimer: timer}}
	runPrefCases(t, []prefCase{
		{
			name: "machine type where none", pref: v1beta1.VirtualMachinePreferenceSpec{Machine: &v1beta1.MachinePreferences{PreferredMachineType: "pc-q35-rhel9.6.0"}},
			want: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Machine: &kubevirtv1.Machine{Type: "pc-q35-rhel9.6.0"}}},
		},
		{
			name: "machine type where empty", pref: v1beta1.VirtualMachinePreferenceSpec{Machine: &v1beta1.MachinePreferences{PreferredMachineType: "q35"}},
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Machine: &kubevirtv1.Machine{}}},
			want: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Machine: &kubevirtv1.Machine{Type: "q35"}}},
		},
		{
			name: "machine type kept", pref: v1beta1.VirtualMachinePreferenceSpec{Machine: &v1beta1.MachinePreferences{PreferredMachineType: "q35"}},
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Machine: &kubevirtv1.Machine{Type: "pc-q35-8.2"}}},
			want: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Machine: &kubevirtv1.Machine{Type: "pc-q35-8.2"}}},
		},
		{name: "empty machine preference", pref: v1beta1.VirtualMachinePreferenceSpec{Machine: &v1beta1.MachinePreferences{}}},
		{
			name: "clock offset and timer where none", pref: clockPref,
			want: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Clock: &kubevirtv1.Clock{ClockOffset: utc, Timer: timer}}},
		},
		{
			name: "a timezone offset is not mixed with a UTC one", pref: clockPref,
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Clock: &kubevirtv1.Clock{ClockOffset: timezone}}},
			want: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Clock: &kubevirtv1.Clock{ClockOffset: timezone, Timer: timer}}},
		},
		{
			name: "timers kept", pref: clockPref,
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Clock: &kubevirtv1.Clock{Timer: &kubevirtv1.Timer{}}}},
			want: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Clock: &kubevirtv1.Clock{ClockOffset: utc, Timer: &kubevirtv1.Timer{}}}},
		},
		{name: "empty clock preference leaves no clock", pref: v1beta1.VirtualMachinePreferenceSpec{Clock: &v1beta1.ClockPreferences{}}},
		{
			name: "subdomain, grace period and architecture where unset",
			pref: v1beta1.VirtualMachinePreferenceSpec{PreferredSubdomain: new("vms"), PreferredTerminationGracePeriodSeconds: new(int64(30)), PreferredArchitecture: new("amd64")},
			want: kubevirtv1.VirtualMachineInstanceSpec{Subdomain: "vms", TerminationGracePeriodSeconds: new(int64(30)), Architecture: "amd64"},
		},
		{
			name: "subdomain, grace period and architecture kept",
			pref: v1beta1.VirtualMachinePreferenceSpec{PreferredSubdomain: new("vms"), PreferredTerminationGracePeriodSeconds: new(int64(30)), PreferredArchitecture: new("arm64")},
			spec: kubevirtv1.VirtualMachineInstanceSpec{Subdomain: "mine", TerminationGracePeriodSeconds: new(int64(0)), Architecture: "amd64"},
			want: kubevirtv1.VirtualMachineInstanceSpec{Subdomain: "mine", TerminationGracePeriodSeconds: new(int64(0)), Architecture: "amd64"},
		},
		{name: "empty preferred architecture", pref: v1beta1.VirtualMachinePreferenceSpec{PreferredArchitecture: new("")}},
	})
}

func TestVolumePreferences(t *testing.T) {
	mine := "mine"
	templates := []kubevirtv1.DataVolumeTemplateSpec{
		{Spec: cdiv1beta1.DataVolumeSpec{PVC: &corev1.PersistentVolumeClaimSpec{}}},
		{Spec: cdiv1beta1.DataVolumeSpec{Storage: &cdiv1beta1.StorageSpec{}}},
		{Spec: cdiv1beta1.DataVolumeSpec{Storage: &cdiv1beta1.StorageSpec{StorageClassName: &mine}}},
		{Spec: cdiv1beta1.DataVolumeSpec{}},
	}
	pref := &v1beta1.VirtualMachinePreferenceSpec{Volumes: &v1beta1.VolumePreferences{PreferredStorageClassName: "fast"}}
	ApplyVolumePreferences(pref, templates)
	want := []kubevirtv1.DataVolumeTemplateSpec{
		{Spec: cdiv1beta1.DataVolumeSpec{PVC: &corev1.PersistentVolumeClaimSpec{StorageClassName: new("fast")}}},
		{Spec: cdiv1beta1.DataVolumeSpec{Storage: &cdiv1beta1.StorageSpec{StorageClassName: new("fast")}}},
		{Spec: cdiv1beta1.DataVolumeSpec{Storage: &cdiv1beta1.StorageSpec{StorageClassName: new("mine")}}},
		{Spec: cdiv1beta1.DataVolumeSpec{}},
	}
	if diff := cmp.Diff(want, templates, diffOpts...); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	// The preference's string is copied, not shared.
	*templates[0].Spec.PVC.StorageClassName = "changed"
	if pref.Volumes.PreferredStorageClassName != "fast" {
		t.Errorf("the preference changed with the template")
	}
	ApplyVolumePreferences(nil, templates)
	ApplyVolumePreferences(&v1beta1.VirtualMachinePreferenceSpec{}, templates)
}
