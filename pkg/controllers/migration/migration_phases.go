package migration

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// phaseOrder ranks the phases a migration goes through; a migration never goes back.
var phaseOrder = map[kubevirtv1.VirtualMachineInstanceMigrationPhase]int{
	kubevirtv1.MigrationPhaseUnset:      0,
	kubevirtv1.MigrationPending:         1,
	kubevirtv1.MigrationScheduling:      2,
	kubevirtv1.MigrationScheduled:       3,
	kubevirtv1.MigrationPreparingTarget: 4,
	kubevirtv1.MigrationTargetReady:     5,
	kubevirtv1.MigrationRunning:         6,
	kubevirtv1.MigrationSucceeded:       7,
	kubevirtv1.MigrationFailed:          7,
}

// inOrder lists the phases of a successful migration, in order.
var inOrder = []kubevirtv1.VirtualMachineInstanceMigrationPhase{
	kubevirtv1.MigrationPending, kubevirtv1.MigrationScheduling, kubevirtv1.MigrationScheduled,
	kubevirtv1.MigrationPreparingTarget, kubevirtv1.MigrationTargetReady, kubevirtv1.MigrationRunning,
	kubevirtv1.MigrationSucceeded,
}

// isFinal reports whether a migration phase is final.
func isFinal(p kubevirtv1.VirtualMachineInstanceMigrationPhase) bool {
	return p == kubevirtv1.MigrationSucceeded || p == kubevirtv1.MigrationFailed
}

// later returns the later of two phases (a migration never goes back).
func later(a, b kubevirtv1.VirtualMachineInstanceMigrationPhase) kubevirtv1.VirtualMachineInstanceMigrationPhase {
	if phaseOrder[b] > phaseOrder[a] {
		return b
	}
	return a
}

// setPhase moves status to phase, recording a transition timestamp for it and for every phase
// of a successful migration it skipped (a controller that was away, or node agents quicker than
// one sync, still leave the whole path visible). Failed records only itself.
func setPhase(st *kubevirtv1.VirtualMachineInstanceMigrationStatus, phase kubevirtv1.VirtualMachineInstanceMigrationPhase, now time.Time) {
	if st.Phase == phase {
		return
	}
	ts := metav1.NewTime(now.Truncate(time.Second))
	record := func(p kubevirtv1.VirtualMachineInstanceMigrationPhase) {
		st.PhaseTransitionTimestamps = append(st.PhaseTransitionTimestamps,
			kubevirtv1.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{Phase: p, PhaseTransitionTimestamp: ts})
	}
	if phase != kubevirtv1.MigrationFailed {
		for _, p := range inOrder {
			if phaseOrder[p] > phaseOrder[st.Phase] && phaseOrder[p] < phaseOrder[phase] {
				record(p)
			}
		}
	}
	record(phase)
	st.Phase = phase
}

// phaseEntered is when the migration entered phase p (zero when it did not).
func phaseEntered(st *kubevirtv1.VirtualMachineInstanceMigrationStatus, p kubevirtv1.VirtualMachineInstanceMigrationPhase) time.Time {
	for _, ts := range st.PhaseTransitionTimestamps {
		if ts.Phase == p {
			return ts.PhaseTransitionTimestamp.Time
		}
	}
	return time.Time{}
}

// ownState is the instance's migrationState when it belongs to migration m, else nil.
func ownState(m *kubevirtv1.VirtualMachineInstanceMigration, vmi *kubevirtv1.VirtualMachineInstance) *kubevirtv1.VirtualMachineInstanceMigrationState {
	if vmi == nil || vmi.Status.MigrationState == nil || vmi.Status.MigrationState.MigrationUID != m.UID {
		return nil
	}
	return vmi.Status.MigrationState
}

// podDown reports whether a pod can no longer run a guest: ended or being deleted.
func podDown(p *corev1.Pod) bool {
	return p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// computeRunning reports whether the pod's compute container (the launcher) runs.
func computeRunning(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == launcherpod.ComputeContainerName {
			return cs.State.Running != nil
		}
	}
	return false
}

// unschedulable returns the scheduler's PodScheduled=False/Unschedulable condition, or nil.
func unschedulable(p *corev1.Pod) *corev1.PodCondition {
	if p.Spec.NodeName != "" {
		return nil
	}
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c
		}
	}
	return nil
}

// progress is the phase the instance's migrationState (of this migration) and the target pod
// say the migration has reached, short of its end (decide handles completion).
func progress(ms *kubevirtv1.VirtualMachineInstanceMigrationState, target *corev1.Pod) kubevirtv1.VirtualMachineInstanceMigrationPhase {
	switch {
	case ms.StartTimestamp != nil:
		return kubevirtv1.MigrationRunning
	case ms.TargetNodeAddress != "":
		return kubevirtv1.MigrationTargetReady
	case target != nil && computeRunning(target):
		return kubevirtv1.MigrationPreparingTarget
	default:
		return kubevirtv1.MigrationScheduled
	}
}
