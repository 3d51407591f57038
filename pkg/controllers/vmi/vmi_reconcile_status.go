package vmi

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/conditions"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// Reasons of a Failed phase set by this controller.
const (
	// ReasonPodFailed: the launcher pod ended before the guest ran.
	ReasonPodFailed = "PodFailed"
	// ReasonPodNotExists: the launcher pod disappeared before the guest ran.
	ReasonPodNotExists = kubevirtv1.PodNotExistsReason
	// ReasonPodTerminating: the launcher pod is being deleted before the guest ran.
	ReasonPodTerminating = kubevirtv1.PodTerminatingReason
	// ReasonCopyFailed: a container that copies a disk (or a kernel boot file) into the launcher
	// pod ended without success before the guest ran; the launcher would wait for that file
	// forever (the pod's restartPolicy is Never, so nothing starts the container again).
	ReasonCopyFailed = "CopyFailed"
)

// failedCopy returns the status of a copy container of the pod that ended with a non-zero exit
// code: the copy failed, or the container never started (a container runtime under load has
// been seen failing to create one: "runc create failed"), or nil.
func failedCopy(pod *corev1.Pod) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		if !strings.HasPrefix(cs.Name, launcherpod.ContainerDiskPrefix) && !strings.HasPrefix(cs.Name, launcherpod.KernelBootPrefix) {
			continue
		}
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return cs
		}
	}
	return nil
}

// podScheduled is the instance condition mirroring the launcher pod's PodScheduled.
const podScheduled = kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled)

// ownsPhase reports whether this controller moves the instance on from phase p; later phases
// belong to the node agent.
func ownsPhase(p kubevirtv1.VirtualMachineInstancePhase) bool {
	switch p {
	case kubevirtv1.VmPhaseUnset, kubevirtv1.Pending, kubevirtv1.Scheduling, kubevirtv1.Scheduled:
		return true
	}
	return false
}

// currentPod picks the pod the instance runs in. A migration's target pod (label
// kubevirt.io/migrationJobUID) does not count until status.nodeName names its node: the migration
// controller's handover makes it the instance's pod. Once the instance has a node, a pod on that
// node wins (after a handover the source pod lingers on the old node); then the newest pod not
// being deleted, else the newest one. There is one in practice; expectations keep it so.
func currentPod(vmi *kubevirtv1.VirtualMachineInstance, pods []*corev1.Pod) *corev1.Pod {
	node := vmi.Status.NodeName
	var best *corev1.Pod
	better := func(p *corev1.Pod) bool {
		if best == nil {
			return true
		}
		if node != "" && (p.Spec.NodeName == node) != (best.Spec.NodeName == node) {
			return p.Spec.NodeName == node
		}
		if (p.DeletionTimestamp == nil) != (best.DeletionTimestamp == nil) {
			return p.DeletionTimestamp == nil
		}
		return best.CreationTimestamp.Before(&p.CreationTimestamp)
	}
	for _, p := range pods {
		if _, target := launcherpod.IsMigrationTarget(p); target && (node == "" || p.Spec.NodeName != node) {
			continue
		}
		if better(p) {
			best = p
		}
	}
	return best
}

// nextPhase is the phase state machine for the part this controller owns:
// Pending → Scheduling (pod exists) → Scheduled (pod bound to a node), and Failed when the pod
// fails, is deleted or disappears, or one of its copies fails, before the node agent reported
// Running.
func nextPhase(old kubevirtv1.VirtualMachineInstancePhase, pod *corev1.Pod) (kubevirtv1.VirtualMachineInstancePhase, string) {
	switch {
	case pod == nil:
		if old == kubevirtv1.Scheduling || old == kubevirtv1.Scheduled {
			return kubevirtv1.Failed, ReasonPodNotExists
		}
		return kubevirtv1.Pending, ""
	case pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded:
		return kubevirtv1.Failed, ReasonPodFailed
	case pod.DeletionTimestamp != nil:
		return kubevirtv1.Failed, ReasonPodTerminating
	case failedCopy(pod) != nil:
		return kubevirtv1.Failed, ReasonCopyFailed
	case pod.Spec.NodeName != "":
		// Bound: the node agent of that node takes over once the launcher is ready.
		return kubevirtv1.Scheduled, ""
	default:
		return kubevirtv1.Scheduling, ""
	}
}

// computeStatus is the one place this controller computes an instance's status from its pods.
// Only the fields this controller owns change: phase (while it owns it), reason, nodeName,
// PodScheduled, activePods, qosClass, launcher image, and the phase transition timestamps.
func computeStatus(vmi *kubevirtv1.VirtualMachineInstance, pods []*corev1.Pod, now time.Time) kubevirtv1.VirtualMachineInstanceStatus {
	st := *vmi.Status.DeepCopy()
	pod := currentPod(vmi, pods)
	if ownsPhase(st.Phase) {
		phase, reason := nextPhase(st.Phase, pod)
		if phase != st.Phase {
			st.Phase, st.Reason = phase, reason
			st.PhaseTransitionTimestamps = append(st.PhaseTransitionTimestamps,
				kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: phase, PhaseTransitionTimestamp: metav1.NewTime(now.Truncate(time.Second))})
		}
		if phase == kubevirtv1.Scheduled && st.NodeName == "" {
			st.NodeName = pod.Spec.NodeName
		}
	}
	if pod == nil {
		return st
	}
	if c := conditions.Pod(pod, corev1.PodScheduled); c != nil {
		conditions.SetVMI(&st, kubevirtv1.VirtualMachineInstanceCondition{Type: podScheduled, Status: c.Status,
			Reason: c.Reason, Message: c.Message, LastTransitionTime: c.LastTransitionTime})
	}
	active := map[types.UID]string{}
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
			active[p.UID] = p.Spec.NodeName
		}
	}
	if len(active) == 0 {
		active = nil
	}
	st.ActivePods = active
	if pod.Status.QOSClass != "" {
		q := pod.Status.QOSClass
		st.QOSClass = &q
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == launcherpod.ComputeContainerName {
			st.LauncherContainerImageVersion = c.Image
		}
	}
	return st
}

// writeWorthy reports whether updated differs from old in something a reader waits for: the
// phase, its reason, the node, news about scheduling (a pod that cannot be scheduled, or that
// now can after it could not), or, while the guest runs, the set of its pods (migrations). activePods, a PodScheduled=True that nobody waited for,
// qosClass and the image ride along with those writes instead of costing their own: that is
// what keeps a start at one status write per phase.
func writeWorthy(old, updated *kubevirtv1.VirtualMachineInstanceStatus) bool {
	if old.Phase != updated.Phase || old.Reason != updated.Reason || old.NodeName != updated.NodeName {
		return true
	}
	if updated.Phase == kubevirtv1.Running && (len(old.ActivePods) > 1 || len(updated.ActivePods) > 1) &&
		!apiequality.Semantic.DeepEqual(old.ActivePods, updated.ActivePods) {
		// A migration: its target pod came or was placed, or one of the two pods ended. (The
		// one pod of a guest that stops ends unreported: the node agent writes the final phase.)
		return true
	}
	oc, nc := conditions.VMI(old, podScheduled), conditions.VMI(updated, podScheduled)
	switch {
	case nc == nil:
		return false
	case nc.Status == corev1.ConditionTrue:
		return oc != nil && oc.Status != corev1.ConditionTrue
	default:
		return oc == nil || oc.Status != nc.Status || oc.Reason != nc.Reason || oc.Message != nc.Message
	}
}

// statusEqual reports whether two statuses are the same (no write at all).
func statusEqual(a, b *kubevirtv1.VirtualMachineInstanceStatus) bool {
	return apiequality.Semantic.DeepEqual(a, b)
}
