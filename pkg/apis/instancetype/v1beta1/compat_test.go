package v1beta1

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	kubevirtv1beta1 "kubevirt.io/api/instancetype/v1beta1"

	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/apitesting"
)

// These tests prove that NativeVirt's instancetype.kubevirt.io/v1beta1 types are JSON-identical
// to KubeVirt's (kubevirt.io/api v1.7.0) for every field modelled here, as
// pkg/apis/kubevirt/v1/compat_test.go does for kubevirt.io. Each of our objects is filled
// completely by reflection, then compared both ways with KubeVirt's type, decoding strictly
// (apitesting.AssertSameJSON). Fields KubeVirt has and NativeVirt does not model are out of scope
// by design: the API server refuses them as unknown.

// compatCase pairs one of our kinds with KubeVirt's.
type compatCase struct {
	kind   string
	ours   func() runtime.Object
	theirs func() any
}

func compatCases() []compatCase {
	return []compatCase{
		{InstancetypeKind, func() runtime.Object { return &VirtualMachineInstancetype{} },
			func() any { return &kubevirtv1beta1.VirtualMachineInstancetype{} }},
		{"VirtualMachineInstancetypeList", func() runtime.Object { return &VirtualMachineInstancetypeList{} },
			func() any { return &kubevirtv1beta1.VirtualMachineInstancetypeList{} }},
		{ClusterInstancetypeKind, func() runtime.Object { return &VirtualMachineClusterInstancetype{} },
			func() any { return &kubevirtv1beta1.VirtualMachineClusterInstancetype{} }},
		{"VirtualMachineClusterInstancetypeList", func() runtime.Object { return &VirtualMachineClusterInstancetypeList{} },
			func() any { return &kubevirtv1beta1.VirtualMachineClusterInstancetypeList{} }},
		{PreferenceKind, func() runtime.Object { return &VirtualMachinePreference{} },
			func() any { return &kubevirtv1beta1.VirtualMachinePreference{} }},
		{"VirtualMachinePreferenceList", func() runtime.Object { return &VirtualMachinePreferenceList{} },
			func() any { return &kubevirtv1beta1.VirtualMachinePreferenceList{} }},
		{ClusterPreferenceKind, func() runtime.Object { return &VirtualMachineClusterPreference{} },
			func() any { return &kubevirtv1beta1.VirtualMachineClusterPreference{} }},
		{"VirtualMachineClusterPreferenceList", func() runtime.Object { return &VirtualMachineClusterPreferenceList{} },
			func() any { return &kubevirtv1beta1.VirtualMachineClusterPreferenceList{} }},
	}
}

func TestJSONCompatibleWithKubeVirt(t *testing.T) {
	for _, mode := range apitesting.FillModes {
		for _, tc := range compatCases() {
			t.Run(mode.Name+"/"+tc.kind, func(t *testing.T) {
				ours := tc.ours()
				(&apitesting.Filler{ZeroLeaves: mode.ZeroLeaves}).Fill(ours)
				ours.GetObjectKind().SetGroupVersionKind(SchemeGroupVersion.WithKind(tc.kind))
				apitesting.AssertSameJSON(t, ours, tc.theirs(), tc.ours())
			})
		}
	}
}
