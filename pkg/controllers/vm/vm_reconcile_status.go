package vm

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/conditions"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/vmis"
)

// GenerationAnnotation on an instance holds the VM generation it was created from, so that
// status.observedGeneration says which spec the running instance reflects.
const GenerationAnnotation = "kubevirt.io/vm-generation"

// Condition reasons of the VM.
const (
	reasonVMINotExists   = "VMINotExists"
	reasonVMINotReady    = "VMINotReady"
	reasonVMITerminating = "VMITerminating"
	// ReasonFailedCreate is the Failure condition's (and warning event's) reason when creating
	// the instance failed.
	ReasonFailedCreate = "FailedCreate"
	// ReasonFailedDelete is the same for deleting it.
	ReasonFailedDelete = "FailedDelete"
	// ReasonSuccessfulCreate is the event reason of a started VM.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	// ReasonSuccessfulDelete is the event reason of a stopped VM.
	ReasonSuccessfulDelete = "SuccessfulDelete"
	// unschedulableReason is the pod (and instance) PodScheduled reason of a pod no node fits.
	unschedulableReason = "Unschedulable"
)

// maxStartBackoff caps the wait between failed starts.
const maxStartBackoff = 300 * time.Second

// startBackoff is the wait after the count-th consecutive failed start: 10 s × count², at most
// five minutes (10 s, 40 s, 90 s, 160 s, 250 s, 300 s, ...).
func startBackoff(count int32) time.Duration {
	if count < 1 {
		count = 1
	}
	d := time.Duration(count) * time.Duration(count) * 10 * time.Second
	if d > maxStartBackoff || d <= 0 {
		return maxStartBackoff
	}
	return d
}

// nextStartFailure updates the start failure record from the VM's current instance: an
// instance that reached Running clears it; one that ended without ever running counts one more
// consecutive failure (once per instance) and sets when the next start may happen. Strategies
// that never restart by themselves keep no record.
func nextStartFailure(old *kubevirtv1.VirtualMachineStartFailure, strategy kubevirtv1.VirtualMachineRunStrategy,
	vmi *kubevirtv1.VirtualMachineInstance, now time.Time) *kubevirtv1.VirtualMachineStartFailure {
	if !backsOff(strategy) && strategy != kubevirtv1.RunStrategyOnce {
		return nil
	}
	if vmi == nil {
		return old
	}
	if vmis.HasRun(vmi) {
		return nil
	}
	if !vmis.IsFinal(vmi) || (old != nil && old.LastFailedVMIUID == vmi.UID) {
		return old
	}
	count := int32(1)
	if old != nil {
		count = old.ConsecutiveFailCount + 1
	}
	retry := metav1.NewTime(now.Add(startBackoff(count)).Truncate(time.Second))
	return &kubevirtv1.VirtualMachineStartFailure{ConsecutiveFailCount: count, LastFailedVMIUID: vmi.UID, RetryAfterTimestamp: &retry}
}

// statusInput is everything the VM status is computed from.
type statusInput struct {
	vm *kubevirtv1.VirtualMachine
	// vmi is the instance after this sync's action (a deleted one carries a deletion timestamp),
	// or nil.
	vmi          *kubevirtv1.VirtualMachineInstance
	requests     []kubevirtv1.VirtualMachineStateChangeRequest
	startFailure *kubevirtv1.VirtualMachineStartFailure
	runStrategy  kubevirtv1.VirtualMachineRunStrategy
	// syncErr is the failure of this sync's action, with its reason.
	syncErr       error
	syncErrReason string
	now           time.Time
	// refs are the instance type and preference references to record; nil keeps the old ones
	// (resolving them failed).
	refs *statusRefs
	// volumes are the VM's DataVolumes and claims; nil when they could not be read.
	volumes *volumeState
}

// computeStatus is the one place the VM status is computed. Fields that do not change keep their
// old values (including condition transition times), so that an unchanged state computes an
// identical status and costs no write.
func computeStatus(in statusInput) kubevirtv1.VirtualMachineStatus {
	old := in.vm.Status
	st := *old.DeepCopy()
	vmi := in.vmi

	st.Created = vmi != nil
	st.Ready = vmi != nil && vmis.IsReady(vmi)
	st.PrintableStatus = withVolumes(printableStatus(in.vm, vmi, in.startFailure, in.runStrategy, in.now), in.vm, vmi, in.runStrategy, in.volumes)
	st.StateChangeRequests = in.requests
	if len(st.StateChangeRequests) == 0 {
		st.StateChangeRequests = nil
	}
	st.StartFailure = in.startFailure
	st.RunStrategy = in.runStrategy
	st.DesiredGeneration = in.vm.Generation
	if in.refs != nil {
		st.InstancetypeRef = in.refs.instancetype
		st.PreferenceRef = in.refs.preference
	}
	if vmi != nil {
		if g, err := strconv.ParseInt(vmi.Annotations[GenerationAnnotation], 10, 64); err == nil {
			st.ObservedGeneration = g
		}
	}

	conds := []kubevirtv1.VirtualMachineCondition{readyCondition(vmi)}
	if vmi != nil && !vmis.IsTerminating(vmi) {
		if c := conditions.VMI(&vmi.Status, kubevirtv1.VirtualMachineInstancePaused); c != nil && c.Status == corev1.ConditionTrue {
			conds = append(conds, kubevirtv1.VirtualMachineCondition{Type: kubevirtv1.VirtualMachinePaused,
				Status: corev1.ConditionTrue, Reason: c.Reason, Message: c.Message})
		}
	}
	if c := restartRequired(in.vm, vmi); c != nil {
		conds = append(conds, *c)
	}
	if in.syncErr != nil {
		conds = append(conds, kubevirtv1.VirtualMachineCondition{Type: kubevirtv1.VirtualMachineFailure,
			Status: corev1.ConditionTrue, Reason: in.syncErrReason, Message: in.syncErr.Error()})
	}
	st.Conditions = mergeConditions(old.Conditions, conds, in.now)
	return st
}

// printableStatus is the one-word state `kubectl get vm` shows.
func printableStatus(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance,
	startFailure *kubevirtv1.VirtualMachineStartFailure, strategy kubevirtv1.VirtualMachineRunStrategy,
	now time.Time) kubevirtv1.VirtualMachinePrintableStatus {
	crashLooping := backsOff(strategy) && startFailure != nil && startFailure.RetryAfterTimestamp != nil &&
		startFailure.RetryAfterTimestamp.After(now)
	switch {
	case vm.DeletionTimestamp != nil:
		return kubevirtv1.VirtualMachineStatusTerminating
	case vmi == nil:
		if crashLooping {
			return kubevirtv1.VirtualMachineStatusCrashLoopBackOff
		}
		return kubevirtv1.VirtualMachineStatusStopped
	case vmis.IsTerminating(vmi):
		return kubevirtv1.VirtualMachineStatusStopping
	}
	switch vmi.Status.Phase {
	case kubevirtv1.Succeeded, kubevirtv1.Failed:
		if crashLooping {
			return kubevirtv1.VirtualMachineStatusCrashLoopBackOff
		}
		return kubevirtv1.VirtualMachineStatusStopped
	case kubevirtv1.VmPhaseUnset, kubevirtv1.Pending, kubevirtv1.Scheduling, kubevirtv1.Scheduled:
		if c := conditions.VMI(&vmi.Status, kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled)); c != nil &&
			c.Status == corev1.ConditionFalse && c.Reason == unschedulableReason {
			return kubevirtv1.VirtualMachineStatusUnschedulable
		}
		return kubevirtv1.VirtualMachineStatusStarting
	case kubevirtv1.Running:
		if vmis.HasCondition(vmi, kubevirtv1.VirtualMachineInstancePaused, corev1.ConditionTrue) {
			return kubevirtv1.VirtualMachineStatusPaused
		}
		if ms := vmi.Status.MigrationState; ms != nil && !ms.Completed && !ms.Failed {
			return kubevirtv1.VirtualMachineStatusMigrating
		}
		return kubevirtv1.VirtualMachineStatusRunning
	default:
		return kubevirtv1.VirtualMachineStatusUnknown
	}
}

// withVolumes refines a printableStatus with the VM's DataVolumes and claims, in KubeVirt's
// order: a VM that terminates, stops, migrates, is paused or runs shows that; otherwise a missing
// claim of an existing instance is ErrorPvcNotFound, a failed DataVolume DataVolumeError (running
// or not), an unschedulable instance stays Unschedulable, a DataVolume being populated is
// Provisioning (also while the VM is halted), and an unbound claim of a VM set to start is
// WaitingForVolumeBinding.
func withVolumes(base kubevirtv1.VirtualMachinePrintableStatus, vm *kubevirtv1.VirtualMachine,
	vmi *kubevirtv1.VirtualMachineInstance, strategy kubevirtv1.VirtualMachineRunStrategy, vols *volumeState) kubevirtv1.VirtualMachinePrintableStatus {
	if vols == nil {
		return base
	}
	switch base {
	case kubevirtv1.VirtualMachineStatusTerminating, kubevirtv1.VirtualMachineStatusStopping, kubevirtv1.VirtualMachineStatusMigrating,
		kubevirtv1.VirtualMachineStatusPaused, kubevirtv1.VirtualMachineStatusRunning:
		return base
	}
	live := vmi != nil && !vmis.IsFinal(vmi)
	switch {
	case vols.missing && live:
		return kubevirtv1.VirtualMachineStatusPvcNotFound
	case len(vols.failed) > 0:
		return kubevirtv1.VirtualMachineStatusDataVolumeError
	case base == kubevirtv1.VirtualMachineStatusUnschedulable:
		return base
	case vols.provisioning:
		return kubevirtv1.VirtualMachineStatusProvisioning
	case vols.unbound && (live || setToStart(vm, strategy)):
		return kubevirtv1.VirtualMachineStatusWaitingForVolumeBinding
	}
	return base
}

// setToStart says whether the run strategy wants the VM running without a start request.
func setToStart(vm *kubevirtv1.VirtualMachine, strategy kubevirtv1.VirtualMachineRunStrategy) bool {
	return strategy == kubevirtv1.RunStrategyAlways || strategy == kubevirtv1.RunStrategyRerunOnFailure ||
		len(vm.Status.StateChangeRequests) > 0 && vm.Status.StateChangeRequests[0].Action == kubevirtv1.StartRequest
}

// readyCondition mirrors the instance's readiness. Its reason and message do not depend on the
// instance's phase, so that Pending → Scheduling → Scheduled costs no VM status write.
func readyCondition(vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachineCondition {
	c := kubevirtv1.VirtualMachineCondition{Type: kubevirtv1.VirtualMachineReady, Status: corev1.ConditionFalse}
	switch {
	case vmi == nil:
		c.Reason, c.Message = reasonVMINotExists, "VMI does not exist"
	case vmis.IsTerminating(vmi):
		c.Reason, c.Message = reasonVMITerminating, "VMI is being deleted"
	case vmi.Status.Phase == kubevirtv1.Running:
		if ic := conditions.VMI(&vmi.Status, kubevirtv1.VirtualMachineInstanceReady); ic != nil {
			c.Status, c.Reason, c.Message = ic.Status, ic.Reason, ic.Message
		} else {
			c.Reason, c.Message = reasonVMINotReady, "VMI is not ready"
		}
	default:
		c.Reason, c.Message = reasonVMINotReady, "VMI is not ready"
	}
	return c
}

// mergeConditions returns want, keeping the old transition time of each condition whose status
// did not change; conditions of other types are kept as they were (owned by someone else).
func mergeConditions(old, want []kubevirtv1.VirtualMachineCondition, now time.Time) []kubevirtv1.VirtualMachineCondition {
	owned := map[kubevirtv1.VirtualMachineConditionType]bool{
		kubevirtv1.VirtualMachineReady: true, kubevirtv1.VirtualMachinePaused: true, kubevirtv1.VirtualMachineFailure: true,
		kubevirtv1.VirtualMachineRestartRequired: true,
	}
	var out []kubevirtv1.VirtualMachineCondition
	for _, c := range old {
		if !owned[c.Type] {
			out = append(out, c)
		}
	}
	for _, w := range want {
		w.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
		for _, o := range old {
			if o.Type == w.Type && o.Status == w.Status {
				w.LastTransitionTime = o.LastTransitionTime
				w.LastProbeTime = o.LastProbeTime
			}
		}
		out = append(out, w)
	}
	return out
}

// statusChanged reports whether a write is needed.
func statusChanged(old, updated *kubevirtv1.VirtualMachineStatus) bool {
	return !apiequality.Semantic.DeepEqual(old, updated)
}
