package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// Status is written by NativeVirt's own controllers and node agents; these checks keep a buggy
// or foreign writer from storing values clients cannot interpret, and keep the few status
// facts other components rely on (final phases, the node of a guest) from moving backwards.

var (
	printableStatuses = []kubevirtv1.VirtualMachinePrintableStatus{
		kubevirtv1.VirtualMachineStatusStopped, kubevirtv1.VirtualMachineStatusProvisioning,
		kubevirtv1.VirtualMachineStatusStarting, kubevirtv1.VirtualMachineStatusRunning,
		kubevirtv1.VirtualMachineStatusPaused, kubevirtv1.VirtualMachineStatusStopping,
		kubevirtv1.VirtualMachineStatusTerminating, kubevirtv1.VirtualMachineStatusCrashLoopBackOff,
		kubevirtv1.VirtualMachineStatusMigrating, kubevirtv1.VirtualMachineStatusUnknown,
		kubevirtv1.VirtualMachineStatusUnschedulable, kubevirtv1.VirtualMachineStatusErrImagePull,
		kubevirtv1.VirtualMachineStatusImagePullBackOff, kubevirtv1.VirtualMachineStatusPvcNotFound,
		kubevirtv1.VirtualMachineStatusDataVolumeError, kubevirtv1.VirtualMachineStatusWaitingForVolumeBinding,
		kubevirtv1.VirtualMachineStatusWaitingForReceiver,
	}
	stateChangeActions = []kubevirtv1.StateChangeRequestAction{kubevirtv1.StartRequest, kubevirtv1.StopRequest}
	vmiPhases          = []kubevirtv1.VirtualMachineInstancePhase{kubevirtv1.Pending, kubevirtv1.Scheduling,
		kubevirtv1.Scheduled, kubevirtv1.Running, kubevirtv1.Succeeded, kubevirtv1.Failed, kubevirtv1.Unknown,
		kubevirtv1.WaitingForSync}
)

// ValidateVirtualMachineStatusUpdate checks a VirtualMachine status written through /status:
// a known printable status, Start/Stop requests only, and typed conditions.
func ValidateVirtualMachineStatusUpdate(newVM, oldVM *kubevirtv1.VirtualMachine) field.ErrorList {
	if newVM == nil || oldVM == nil {
		return field.ErrorList{field.Required(field.NewPath("status"), "a VirtualMachine is required")}
	}
	var errs field.ErrorList
	statusPath := field.NewPath("status")
	status := &newVM.Status
	if s := status.PrintableStatus; s != "" && !contains(printableStatuses, s) {
		errs = append(errs, field.NotSupported(statusPath.Child("printableStatus"), string(s), printableStatuses))
	}
	for i, req := range status.StateChangeRequests {
		if !contains(stateChangeActions, req.Action) {
			errs = append(errs, field.NotSupported(statusPath.Child("stateChangeRequests").Index(i).Child("action"),
				string(req.Action), stateChangeActions))
		}
	}
	for i, c := range status.Conditions {
		if c.Type == "" {
			errs = append(errs, field.Required(statusPath.Child("conditions").Index(i).Child("type"), ""))
		}
	}
	return errs
}

// ValidateVirtualMachineInstanceStatusUpdate checks an instance status written through
// /status: a known phase, no way back from a final phase, and a node that changes only once
// a migration has completed.
func ValidateVirtualMachineInstanceStatusUpdate(newVMI, oldVMI *kubevirtv1.VirtualMachineInstance) field.ErrorList {
	if newVMI == nil || oldVMI == nil {
		return field.ErrorList{field.Required(field.NewPath("status"), "a VirtualMachineInstance is required")}
	}
	var errs field.ErrorList
	statusPath := field.NewPath("status")
	newStatus, oldStatus := &newVMI.Status, &oldVMI.Status
	phasePath := statusPath.Child("phase")
	if p := newStatus.Phase; p != "" && !contains(vmiPhases, p) {
		errs = append(errs, field.NotSupported(phasePath, string(p), vmiPhases))
	}
	if isFinalPhase(oldStatus.Phase) && newStatus.Phase != oldStatus.Phase {
		errs = append(errs, field.Forbidden(phasePath,
			"the instance is in the final phase "+string(oldStatus.Phase)+" and cannot move to "+phaseName(newStatus.Phase)))
	}
	if oldStatus.NodeName != "" && newStatus.NodeName != oldStatus.NodeName && !migrationCompleted(newStatus) {
		errs = append(errs, field.Forbidden(statusPath.Child("nodeName"),
			"may not change once set, except after a completed migration (status.migrationState.completed)"))
	}
	for i, c := range newStatus.Conditions {
		if c.Type == "" {
			errs = append(errs, field.Required(statusPath.Child("conditions").Index(i).Child("type"), ""))
		}
	}
	return errs
}

// isFinalPhase reports whether an instance in phase p is done for good.
func isFinalPhase(p kubevirtv1.VirtualMachineInstancePhase) bool {
	return p == kubevirtv1.Succeeded || p == kubevirtv1.Failed
}

// phaseName shows an empty phase readably.
func phaseName(p kubevirtv1.VirtualMachineInstancePhase) string {
	if p == "" {
		return "an empty phase"
	}
	return string(p)
}

// migrationCompleted reports whether status carries a completed migration.
func migrationCompleted(status *kubevirtv1.VirtualMachineInstanceStatus) bool {
	return status.MigrationState != nil && status.MigrationState.Completed
}
