// Package virtualmachine stores VirtualMachines: the rules of the main resource and /status,
// field selectors and the `kubectl get` table.
package virtualmachine

import (
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/validation"
	"github.com/nativevirt/nativevirt/pkg/registry/defaulting"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Rules are the VirtualMachine strategies' rules.
var Rules = store.Rules[*kubevirtv1.VirtualMachine]{
	PrepareForCreate:       prepareForCreate,
	PrepareForUpdate:       prepareForUpdate,
	PrepareForStatusUpdate: prepareForStatusUpdate,
	Validate:               validation.ValidateVirtualMachine,
	ValidateUpdate:         validation.ValidateVirtualMachineUpdate,
	ValidateStatusUpdate:   validation.ValidateVirtualMachineStatusUpdate,
}

// prepareForCreate clears status, starts the generation at 1, gives matchers their default kind
// and fixes the firmware UUID.
func prepareForCreate(vm *kubevirtv1.VirtualMachine) {
	vm.Status = kubevirtv1.VirtualMachineStatus{}
	vm.Generation = 1
	defaultMatcherKinds(vm)
	if vm.Spec.Template != nil {
		defaulting.SetFirmwareUUID(&vm.Spec.Template.Spec, vm.Namespace, vm.Name, "")
	}
}

// prepareForUpdate keeps status and the firmware UUID, and bumps the generation on spec changes.
func prepareForUpdate(newVM, oldVM *kubevirtv1.VirtualMachine) {
	newVM.Status = oldVM.Status
	defaultMatcherKinds(newVM)
	if newVM.Spec.Template != nil {
		previous := defaulting.FirmwareUUIDOf(templateSpec(oldVM))
		defaulting.SetFirmwareUUID(&newVM.Spec.Template.Spec, newVM.Namespace, newVM.Name, previous)
	}
	if !apiequality.Semantic.DeepEqual(newVM.Spec, oldVM.Spec) {
		newVM.Generation = oldVM.Generation + 1
	}
}

// prepareForStatusUpdate keeps everything but status as it was.
func prepareForStatusUpdate(newVM, oldVM *kubevirtv1.VirtualMachine) {
	newVM.Spec = oldVM.Spec
	store.KeepMetadata(&newVM.ObjectMeta, &oldVM.ObjectMeta)
}

func templateSpec(vm *kubevirtv1.VirtualMachine) *kubevirtv1.VirtualMachineInstanceSpec {
	if vm.Spec.Template == nil {
		return nil
	}
	return &vm.Spec.Template.Spec
}

// SelectableFields are the fields a field selector may name.
func SelectableFields(vm *kubevirtv1.VirtualMachine) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"status.printableStatus": string(vm.Status.PrintableStatus),
	}, &vm.ObjectMeta, true)
}

// GetAttrs returns labels and selectable fields of a VirtualMachine.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	vm, ok := obj.(*kubevirtv1.VirtualMachine)
	if !ok {
		return nil, nil, fmt.Errorf("not a VirtualMachine: %T", obj)
	}
	return vm.Labels, SelectableFields(vm), nil
}
