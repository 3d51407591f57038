// Package virtualmachineinstancereplicaset stores VirtualMachineInstanceReplicaSets: the rules of
// the main resource and /status, the autoscaling/v1 /scale subresource and the `kubectl get` table.
package virtualmachineinstancereplicaset

import (
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/validation"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Rules are the VirtualMachineInstanceReplicaSet strategies' rules.
var Rules = store.Rules[*kubevirtv1.VirtualMachineInstanceReplicaSet]{
	PrepareForCreate:       prepareForCreate,
	PrepareForUpdate:       prepareForUpdate,
	PrepareForStatusUpdate: prepareForStatusUpdate,
	Validate:               validation.ValidateVirtualMachineInstanceReplicaSet,
	ValidateUpdate:         validation.ValidateVirtualMachineInstanceReplicaSetUpdate,
	ValidateStatusUpdate:   validation.ValidateVirtualMachineInstanceReplicaSetStatusUpdate,
}

func prepareForCreate(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) {
	rs.Status = kubevirtv1.VirtualMachineInstanceReplicaSetStatus{}
	rs.Generation = 1
	if rs.Spec.Replicas == nil {
		one := int32(1)
		rs.Spec.Replicas = &one
	}
}

func prepareForUpdate(newRS, oldRS *kubevirtv1.VirtualMachineInstanceReplicaSet) {
	newRS.Status = oldRS.Status
	if newRS.Spec.Replicas == nil {
		newRS.Spec.Replicas = oldRS.Spec.Replicas
	}
	if !apiequality.Semantic.DeepEqual(newRS.Spec, oldRS.Spec) {
		newRS.Generation = oldRS.Generation + 1
	}
}

func prepareForStatusUpdate(newRS, oldRS *kubevirtv1.VirtualMachineInstanceReplicaSet) {
	newRS.Spec = oldRS.Spec
	store.KeepMetadata(&newRS.ObjectMeta, &oldRS.ObjectMeta)
}

// GetAttrs returns labels and selectable fields (metadata.name, metadata.namespace).
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	rs, ok := obj.(*kubevirtv1.VirtualMachineInstanceReplicaSet)
	if !ok {
		return nil, nil, fmt.Errorf("not a VirtualMachineInstanceReplicaSet: %T", obj)
	}
	return rs.Labels, generic.ObjectMetaFieldsSet(&rs.ObjectMeta, true), nil
}
