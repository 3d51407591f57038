package validation

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
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

// IsMigrationFinal reports whether a migration is done for good (Succeeded or Failed).
func IsMigrationFinal(m *kubevirtv1.VirtualMachineInstanceMigration) bool {
	return m.Status.Phase == kubevirtv1.MigrationSucceeded || m.Status.Phase == kubevirtv1.MigrationFailed
}

// HotplugVolumesNotMigratableReason is the reason given when a migration is refused because
// the instance has hotplugged volumes.
const HotplugVolumesNotMigratableReason = "HotplugVolumesNotLiveMigratable"

// hotplugVolumeNames lists the hotpluggable volumes of spec, sorted.
func hotplugVolumeNames(spec *kubevirtv1.VirtualMachineInstanceSpec) []string {
	var out []string
	for name := range hotplugVolumes(spec) {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// ValidateVirtualMachineInstanceMigrationSource checks, when a migration is created, that the
// instance it names can be migrated, as KubeVirt's admission does: the instance exists (vmi nil:
// it does not), has not finished, is not being deleted, has no hotplugged volumes, does not report LiveMigratable=False,
// and no other migration of it is in flight (others: the namespace's other migrations of the
// same instance). An instance that is not Running yet is accepted (as by KubeVirt); the migration
// controller fails the migration then.
func ValidateVirtualMachineInstanceMigrationSource(m *kubevirtv1.VirtualMachineInstanceMigration,
	vmi *kubevirtv1.VirtualMachineInstance, others []*kubevirtv1.VirtualMachineInstanceMigration) field.ErrorList {
	path := field.NewPath("spec", "vmiName")
	if m == nil {
		return field.ErrorList{field.Required(field.NewPath("spec"), "a VirtualMachineInstanceMigration is required")}
	}
	name := m.Spec.VMIName
	switch {
	case vmi == nil:
		return field.ErrorList{field.Invalid(path, name, fmt.Sprintf("the VMI %q does not exist", m.Namespace+"/"+name))}
	case isFinalPhase(vmi.Status.Phase):
		return field.ErrorList{field.Invalid(path, name, "Cannot migrate VMI in finalized state.")}
	case vmi.DeletionTimestamp != nil:
		return field.ErrorList{field.Invalid(path, name, "Cannot migrate VMI, Reason: Terminating, Message: the VMI is being deleted")}
	}
	if hot := hotplugVolumeNames(&vmi.Spec); len(hot) > 0 {
		return field.ErrorList{field.Invalid(path, name, fmt.Sprintf("Cannot migrate VMI, Reason: %s, Message: "+
			"the VMI has hotplugged volumes (%s), which NativeVirt cannot live-migrate yet; unplug them (removevolume) first", HotplugVolumesNotMigratableReason, strings.Join(hot, ", ")))}
	}
	for _, c := range vmi.Status.Conditions {
		if c.Type == kubevirtv1.VirtualMachineInstanceIsMigratable && c.Status == corev1.ConditionFalse {
			return field.ErrorList{field.Invalid(path, name, fmt.Sprintf("Cannot migrate VMI, Reason: %s, Message: %s", c.Reason, c.Message))}
		}
	}
	for _, o := range others {
		// An object of the same name is this one (an update) or makes the create fail anyway
		// (AlreadyExists, the clearer answer).
		if o == nil || o.UID == m.UID || (o.Name == m.Name && o.Namespace == m.Namespace) || o.Spec.VMIName != name || IsMigrationFinal(o) {
			continue
		}
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"in-flight migration detected. Active migration job (%s) is currently already in progress for VMI %s.", o.UID, name))}
	}
	return nil
}
