package instancetype

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/validation"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// object is what the shared rules need of each kind: an API object with metadata.
type object interface {
	runtime.Object
	metav1.Object
}

// kindRules are what tells the kinds apart in their strategy.
type kindRules[T object] struct {
	// spec returns the object's spec, compared to tell a spec change from a metadata change.
	spec           func(T) any
	validate       func(T) field.ErrorList
	validateUpdate func(newObj, oldObj T) field.ErrorList
	warnings       func(T) []string
}

// rules builds the strategy rules of a kind. There is no status to clear or keep.
func rules[T object](k kindRules[T]) store.Rules[T] {
	return store.Rules[T]{
		PrepareForCreate: func(obj T) { obj.SetGeneration(1) },
		// The registry has restored the old generation before; a spec change bumps it, so that
		// a client can tell which version of an instance type or preference it saw.
		PrepareForUpdate: func(newObj, oldObj T) {
			if !apiequality.Semantic.DeepEqual(k.spec(newObj), k.spec(oldObj)) {
				newObj.SetGeneration(oldObj.GetGeneration() + 1)
			}
		},
		Validate:       k.validate,
		ValidateUpdate: k.validateUpdate,
		Warnings:       k.warnings,
	}
}

// The rules of the four kinds.
var (
	InstancetypeRules = rules(kindRules[*v1beta1.VirtualMachineInstancetype]{
		spec:           func(o *v1beta1.VirtualMachineInstancetype) any { return &o.Spec },
		validate:       validation.ValidateVirtualMachineInstancetype,
		validateUpdate: validation.ValidateVirtualMachineInstancetypeUpdate,
	})
	ClusterInstancetypeRules = rules(kindRules[*v1beta1.VirtualMachineClusterInstancetype]{
		spec:           func(o *v1beta1.VirtualMachineClusterInstancetype) any { return &o.Spec },
		validate:       validation.ValidateVirtualMachineClusterInstancetype,
		validateUpdate: validation.ValidateVirtualMachineClusterInstancetypeUpdate,
	})
	PreferenceRules = rules(kindRules[*v1beta1.VirtualMachinePreference]{
		spec:           func(o *v1beta1.VirtualMachinePreference) any { return &o.Spec },
		validate:       validation.ValidateVirtualMachinePreference,
		validateUpdate: validation.ValidateVirtualMachinePreferenceUpdate,
		warnings: func(o *v1beta1.VirtualMachinePreference) []string {
			return validation.WarningsForPreferenceSpec(&o.Spec)
		},
	})
	ClusterPreferenceRules = rules(kindRules[*v1beta1.VirtualMachineClusterPreference]{
		spec:           func(o *v1beta1.VirtualMachineClusterPreference) any { return &o.Spec },
		validate:       validation.ValidateVirtualMachineClusterPreference,
		validateUpdate: validation.ValidateVirtualMachineClusterPreferenceUpdate,
		warnings: func(o *v1beta1.VirtualMachineClusterPreference) []string {
			return validation.WarningsForPreferenceSpec(&o.Spec)
		},
	})
)
