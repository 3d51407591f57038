// Package ownerref builds the owner references and the adopt/release patches the VM and replica
// set controllers use, the way Kubernetes' ControllerRefManager does: a merge patch that carries
// the dependent's UID, so that the server refuses it when the object was replaced meanwhile.
package ownerref

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Controller returns an owner reference making owner (of kind in apiVersion) the controller.
func Controller(apiVersion, kind string, owner metav1.Object) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         apiVersion,
		Kind:               kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// IsControlledBy reports whether obj's controller reference points at the owner uid.
func IsControlledBy(obj metav1.Object, owner types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == owner
}

type patchMeta struct {
	UID             types.UID               `json:"uid"`
	OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
}

type patch struct {
	Metadata patchMeta `json:"metadata"`
}

// AdoptPatch is a JSON merge patch that adds ref to obj's owner references. It fails on the
// server if obj's UID changed.
func AdoptPatch(obj metav1.Object, ref metav1.OwnerReference) ([]byte, error) {
	refs := append([]metav1.OwnerReference{}, obj.GetOwnerReferences()...)
	refs = append(refs, ref)
	return json.Marshal(patch{Metadata: patchMeta{UID: obj.GetUID(), OwnerReferences: refs}})
}

// ReleasePatch is a JSON merge patch that removes the reference to owner from obj's owner
// references. It fails on the server if obj's UID changed.
func ReleasePatch(obj metav1.Object, owner types.UID) ([]byte, error) {
	refs := []metav1.OwnerReference{}
	for _, r := range obj.GetOwnerReferences() {
		if r.UID != owner {
			refs = append(refs, r)
		}
	}
	return json.Marshal(patch{Metadata: patchMeta{UID: obj.GetUID(), OwnerReferences: refs}})
}
