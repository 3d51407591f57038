package ownerref

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestPatches(t *testing.T) {
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "c", UID: "other"}
	owner := &metav1.ObjectMeta{Name: "rs", UID: "rs-uid"}
	ref := Controller("kubevirt.io/v1", "VirtualMachineInstanceReplicaSet", owner)
	tests := []struct {
		name  string
		refs  []metav1.OwnerReference
		adopt bool
		want  []metav1.OwnerReference
	}{
		{name: "adopt an orphan", adopt: true, want: []metav1.OwnerReference{ref}},
		{name: "adopt keeps other owners", refs: []metav1.OwnerReference{other}, adopt: true, want: []metav1.OwnerReference{other, ref}},
		{name: "release", refs: []metav1.OwnerReference{other, ref}, want: []metav1.OwnerReference{other}},
		{name: "release the last owner", refs: []metav1.OwnerReference{ref}, want: []metav1.OwnerReference{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{Name: "vmi", UID: "vmi-uid", OwnerReferences: tc.refs}
			var raw []byte
			var err error
			if tc.adopt {
				raw, err = AdoptPatch(obj, ref)
			} else {
				raw, err = ReleasePatch(obj, owner.UID)
			}
			if err != nil {
				t.Fatal(err)
			}
			var got patch
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if got.Metadata.UID != "vmi-uid" {
				t.Errorf("patch uid precondition = %q", got.Metadata.UID)
			}
			if diff := cmp.Diff(tc.want, got.Metadata.OwnerReferences); diff != "" {
				t.Errorf("owner references (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsControlledBy(t *testing.T) {
	obj := &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
		{UID: "a"}, {UID: "b", Controller: ptr.To(true)}}}
	tests := []struct {
		uid  types.UID
		want bool
	}{{"a", false}, {"b", true}, {"c", false}}
	for _, tc := range tests {
		if got := IsControlledBy(obj, tc.uid); got != tc.want {
			t.Errorf("IsControlledBy(%s) = %v, want %v", tc.uid, got, tc.want)
		}
	}
}
