// Package virtualmachineinstancemigration stores VirtualMachineInstanceMigrations: the rules of
// the main resource and /status, field selectors (spec.vmiName, status.phase) and the table.
package virtualmachineinstancemigration

import (
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/registry/generic"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/validation"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Rules are the VirtualMachineInstanceMigration strategies' rules.
var Rules = store.Rules[*kubevirtv1.VirtualMachineInstanceMigration]{
	PrepareForCreate:       prepareForCreate,
	PrepareForUpdate:       prepareForUpdate,
	PrepareForStatusUpdate: prepareForStatusUpdate,
	Validate:               validation.ValidateVirtualMachineInstanceMigration,
	ValidateUpdate:         validation.ValidateVirtualMachineInstanceMigrationUpdate,
	ValidateStatusUpdate:   validation.ValidateVirtualMachineInstanceMigrationStatusUpdate,
}

// prepareForCreate clears status and, as KubeVirt's mutating webhook does, labels the migration
// with its instance (kubevirt.io/vmi-name, what `virtctl migrate-cancel` selects by) and adds the
// finalizer kubevirt.io/migrationJobFinalize, which the migration controller removes once the
// target is cleaned up (so deleting a migration cancels it).
func prepareForCreate(m *kubevirtv1.VirtualMachineInstanceMigration) {
	m.Status = kubevirtv1.VirtualMachineInstanceMigrationStatus{}
	m.Generation = 1
	if name := m.Spec.VMIName; name != "" && len(utilvalidation.IsValidLabelValue(name)) == 0 {
		labels := make(map[string]string, len(m.Labels)+1)
		for k, v := range m.Labels {
			labels[k] = v
		}
		labels[kubevirtv1.MigrationSelectorLabel] = name
		m.Labels = labels
	}
	if !slices.Contains(m.Finalizers, kubevirtv1.VirtualMachineInstanceMigrationFinalizer) {
		m.Finalizers = append(m.Finalizers, kubevirtv1.VirtualMachineInstanceMigrationFinalizer)
	}
}

func prepareForUpdate(newM, oldM *kubevirtv1.VirtualMachineInstanceMigration) {
	newM.Status = oldM.Status
	if !apiequality.Semantic.DeepEqual(newM.Spec, oldM.Spec) {
		newM.Generation = oldM.Generation + 1
	}
}

func prepareForStatusUpdate(newM, oldM *kubevirtv1.VirtualMachineInstanceMigration) {
	newM.Spec = oldM.Spec
	store.KeepMetadata(&newM.ObjectMeta, &oldM.ObjectMeta)
}

// SelectableFields are the fields a field selector may name.
func SelectableFields(m *kubevirtv1.VirtualMachineInstanceMigration) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"spec.vmiName": m.Spec.VMIName,
		"status.phase": string(m.Status.Phase),
	}, &m.ObjectMeta, true)
}

// GetAttrs returns labels and selectable fields of a VirtualMachineInstanceMigration.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	m, ok := obj.(*kubevirtv1.VirtualMachineInstanceMigration)
	if !ok {
		return nil, nil, fmt.Errorf("not a VirtualMachineInstanceMigration: %T", obj)
	}
	return m.Labels, SelectableFields(m), nil
}
