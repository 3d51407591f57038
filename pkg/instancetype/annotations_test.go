package instancetype

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestSetAnnotations(t *testing.T) {
	vm := func(itKind, prefKind string) *kubevirtv1.VirtualMachine {
		return &kubevirtv1.VirtualMachine{Spec: kubevirtv1.VirtualMachineSpec{
			Instancetype: &kubevirtv1.InstancetypeMatcher{Name: "u1.small", Kind: itKind},
			Preference:   &kubevirtv1.PreferenceMatcher{Name: "fedora", Kind: prefKind},
		}}
	}
	for _, tc := range []struct {
		name string
		vm   *kubevirtv1.VirtualMachine
		have map[string]string
		want map[string]string
	}{
		{
			name: "empty kinds are the cluster kinds", vm: vm("", ""),
			want: map[string]string{ClusterInstancetypeAnnotation: "u1.small", ClusterPreferenceAnnotation: "fedora"},
		},
		{
			name: "namespaced kinds", vm: vm("VirtualMachineInstancetype", "VirtualMachinePreference"),
			want: map[string]string{InstancetypeAnnotation: "u1.small", PreferenceAnnotation: "fedora"},
		},
		{
			name: "namespaced plural resource names", vm: vm("virtualmachineinstancetypes", "virtualmachinepreferences"),
			want: map[string]string{InstancetypeAnnotation: "u1.small", PreferenceAnnotation: "fedora"},
		},
		{
			name: "cluster kinds", vm: vm("VirtualMachineClusterInstancetype", "VirtualMachineClusterPreference"),
			want: map[string]string{ClusterInstancetypeAnnotation: "u1.small", ClusterPreferenceAnnotation: "fedora"},
		},
		{
			name: "cluster resource names, any case", vm: vm("VirtualMachineClusterInstancetypes", "virtualmachineclusterpreference"),
			want: map[string]string{ClusterInstancetypeAnnotation: "u1.small", ClusterPreferenceAnnotation: "fedora"},
		},
		{name: "unknown kinds", vm: vm("Flavor", "Taste")},
		{
			name: "instance type only keeps other annotations",
			vm: &kubevirtv1.VirtualMachine{Spec: kubevirtv1.VirtualMachineSpec{
				Instancetype: &kubevirtv1.InstancetypeMatcher{Name: "u1.small"}}},
			have: map[string]string{"a": "b"},
			want: map[string]string{"a": "b", ClusterInstancetypeAnnotation: "u1.small"},
		},
		{
			name: "preference only",
			vm: &kubevirtv1.VirtualMachine{Spec: kubevirtv1.VirtualMachineSpec{
				Preference: &kubevirtv1.PreferenceMatcher{Name: "fedora", Kind: "VirtualMachinePreference"}}},
			want: map[string]string{PreferenceAnnotation: "fedora"},
		},
		{name: "no matchers", vm: &kubevirtv1.VirtualMachine{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := metav1.ObjectMeta{Annotations: tc.have}
			SetAnnotations(tc.vm, &meta)
			if diff := cmp.Diff(tc.want, meta.Annotations, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
	// Nil arguments change nothing and do not panic.
	SetAnnotations(nil, &metav1.ObjectMeta{})
	SetAnnotations(vm("", ""), nil)
}

func TestInstancetypeAnnotations(t *testing.T) {
	metaPath := templatePath.Child("metadata")
	for _, tc := range []struct {
		name     string
		have     map[string]string
		want     map[string]string
		wantErrs field.ErrorList
	}{
		{name: "added", want: map[string]string{"a": "1", "b": "2", "example.com/c": "3"}},
		{name: "same value is no conflict", have: map[string]string{"a": "1"}, want: map[string]string{"a": "1", "b": "2", "example.com/c": "3"}},
		{
			name: "other values conflict, in key order",
			have: map[string]string{"example.com/c": "x", "a": "x"},
			want: map[string]string{"a": "x", "b": "2", "example.com/c": "x"},
			wantErrs: field.ErrorList{
				conflictErr("spec.template.metadata.annotations[a]"),
				conflictErr("spec.template.metadata.annotations[example.com/c]"),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := metav1.ObjectMeta{Annotations: tc.have}
			errs := applyInstancetypeAnnotations(metaPath, map[string]string{"a": "1", "b": "2", "example.com/c": "3"}, &meta)
			wantErrs(t, errs, tc.wantErrs...)
			if diff := cmp.Diff(tc.want, meta.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPreferenceAnnotations(t *testing.T) {
	meta := metav1.ObjectMeta{Annotations: map[string]string{"a": "mine", "c": "mine"}}
	applyPreferenceAnnotations(map[string]string{"a": "1", "b": "2"}, &meta)
	want := map[string]string{"a": "mine", "b": "2", "c": "mine"}
	if diff := cmp.Diff(want, meta.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	empty := metav1.ObjectMeta{}
	applyPreferenceAnnotations(nil, &empty)
	if empty.Annotations != nil {
		t.Errorf("no preferred annotations gave %v", empty.Annotations)
	}
}
