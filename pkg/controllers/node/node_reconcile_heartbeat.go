package node

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/vmis"
)

const (
	// SchedulableLabel marks a node whose node agent is alive ("true") or gone ("false").
	SchedulableLabel = "kubevirt.io/schedulable"
	// HeartbeatAnnotation is the node agent's last heartbeat (RFC 3339), written every 30 s.
	HeartbeatAnnotation = "kubevirt.io/heartbeat"
	// HeartbeatTimeout is the age at which a heartbeat means the agent is gone.
	HeartbeatTimeout = 120 * time.Second
	// ReasonNodeUnresponsive is the reason of an instance failed because its node's agent is
	// gone and its launcher pod with it.
	ReasonNodeUnresponsive = "NodeUnresponsive"
)

// heartbeatState is what the heartbeat says about a node.
type heartbeatState struct {
	// stale: the heartbeat is missing, unreadable or older than the timeout.
	stale bool
	// recheckIn is when a fresh heartbeat goes stale (if nothing newer arrives).
	recheckIn time.Duration
}

// heartbeat judges the node's heartbeat at now.
func heartbeat(node *corev1.Node, now time.Time) heartbeatState {
	raw, ok := node.Annotations[HeartbeatAnnotation]
	if !ok {
		return heartbeatState{stale: true}
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return heartbeatState{stale: true}
	}
	age := now.Sub(t)
	if age > HeartbeatTimeout {
		return heartbeatState{stale: true}
	}
	// One second of slack so that the recheck lands after the deadline, not on it.
	return heartbeatState{recheckIn: HeartbeatTimeout - age + time.Second}
}

// shouldMarkUnschedulable reports whether a node still advertised as schedulable has lost its
// agent. Nodes without the label are not NativeVirt nodes (or are already marked).
func shouldMarkUnschedulable(node *corev1.Node, hb heartbeatState) bool {
	return node.Labels[SchedulableLabel] == "true" && hb.stale
}

// podMayRun reports whether a launcher pod may still run its guest: it exists, is not in a
// final phase and not every one of its containers has terminated (KubeVirt's alive pods). A pod
// being deleted may still run: on a node whose kubelet is gone, nothing stops it until the node
// is known to be down (the pod is then force-deleted, e.g. after the out-of-service taint).
func podMayRun(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if len(pod.Status.ContainerStatuses) == 0 {
		return true
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Terminated == nil {
			return true
		}
	}
	return false
}

// orphanedInstances are the instances on a dead node none of whose launcher pods may still run
// (podCount counts those that may): nothing will ever report on them again, so they fail.
// Instances being deleted are left to their deletion.
func orphanedInstances(onNode []*kubevirtv1.VirtualMachineInstance, podCount func(uid string) int) []*kubevirtv1.VirtualMachineInstance {
	var out []*kubevirtv1.VirtualMachineInstance
	for _, vmi := range onNode {
		if vmis.IsFinal(vmi) || vmis.IsTerminating(vmi) || podCount(string(vmi.UID)) > 0 {
			continue
		}
		out = append(out, vmi)
	}
	return out
}

// failedStatus is vmi's status once failed for its dead node.
func failedStatus(vmi *kubevirtv1.VirtualMachineInstance, now time.Time) kubevirtv1.VirtualMachineInstanceStatus {
	st := *vmi.Status.DeepCopy()
	st.Phase = kubevirtv1.Failed
	st.Reason = ReasonNodeUnresponsive
	st.ActivePods = nil
	st.PhaseTransitionTimestamps = append(st.PhaseTransitionTimestamps, kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{
		Phase: kubevirtv1.Failed, PhaseTransitionTimestamp: metav1.NewTime(now.Truncate(time.Second))})
	return st
}
