package validation

import (
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

var (
	migrationPhases = []kubevirtv1.VirtualMachineInstanceMigrationPhase{kubevirtv1.MigrationPending,
		kubevirtv1.MigrationScheduling, kubevirtv1.MigrationScheduled, kubevirtv1.MigrationPreparingTarget,
		kubevirtv1.MigrationTargetReady, kubevirtv1.MigrationRunning, kubevirtv1.MigrationSucceeded,
		kubevirtv1.MigrationFailed, kubevirtv1.MigrationWaitingForSync, kubevirtv1.MigrationSynchronizing}
	migrationPriorities = []kubevirtv1.MigrationPriority{kubevirtv1.PrioritySystemCritical,
		kubevirtv1.PriorityUserTriggered, kubevirtv1.PrioritySystemMaintenance}
)

// ValidateVirtualMachineInstanceMigration validates a new migration: it names an instance in
// its namespace, may add node selector labels, and is not a cross-cluster migration.
func ValidateVirtualMachineInstanceMigration(m *kubevirtv1.VirtualMachineInstanceMigration) field.ErrorList {
	if m == nil {
		return field.ErrorList{field.Required(field.NewPath("spec"), "a VirtualMachineInstanceMigration is required")}
	}
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	spec := &m.Spec
	errs = append(errs, check(unsupportedMigrationSpecFields, spec, specPath)...)
	errs = append(errs, validateDNSLabel(spec.VMIName, specPath.Child("vmiName"))...)
	errs = append(errs, metav1validation.ValidateLabels(spec.AddedNodeSelector, specPath.Child("addedNodeSelector"))...)
	if p := spec.Priority; p != nil && !contains(migrationPriorities, *p) {
		errs = append(errs, field.NotSupported(specPath.Child("priority"), string(*p), migrationPriorities))
	}
	return errs
}

// ValidateVirtualMachineInstanceMigrationUpdate refuses spec changes: a migration is one
// request, acted on once.
func ValidateVirtualMachineInstanceMigrationUpdate(newM, oldM *kubevirtv1.VirtualMachineInstanceMigration) field.ErrorList {
	if newM == nil || oldM == nil {
		return field.ErrorList{field.Required(field.NewPath("spec"), "a VirtualMachineInstanceMigration is required")}
	}
	return validateImmutableSpec(&newM.Spec, &oldM.Spec, field.NewPath("spec"))
}

// ValidateVirtualMachineInstanceMigrationStatusUpdate requires a known phase.
func ValidateVirtualMachineInstanceMigrationStatusUpdate(newM, oldM *kubevirtv1.VirtualMachineInstanceMigration) field.ErrorList {
	if newM == nil || oldM == nil {
		return field.ErrorList{field.Required(field.NewPath("status"), "a VirtualMachineInstanceMigration is required")}
	}
	var errs field.ErrorList
	statusPath := field.NewPath("status")
	if p := newM.Status.Phase; p != "" && !contains(migrationPhases, p) {
		errs = append(errs, field.NotSupported(statusPath.Child("phase"), string(p), migrationPhases))
	}
	for i, c := range newM.Status.Conditions {
		if c.Type == "" {
			errs = append(errs, field.Required(statusPath.Child("conditions").Index(i).Child("type"), ""))
		}
	}
	return errs
}
