package replicaset

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/vmis"
)

// computeStatus is the one place the replica set status is computed: the active instances, the
// ready ones, the selector in string form (for /scale and `kubectl scale`), ReplicaFailure while
// creating or deleting fails and ReplicaPaused while paused. Unchanged conditions keep their
// transition time so that an unchanged state costs no write.
func computeStatus(rs *kubevirtv1.VirtualMachineInstanceReplicaSet, active []*kubevirtv1.VirtualMachineInstance,
	selector string, failReason string, failure error, now time.Time) kubevirtv1.VirtualMachineInstanceReplicaSetStatus {
	st := kubevirtv1.VirtualMachineInstanceReplicaSetStatus{Replicas: int32(len(active)), LabelSelector: selector}
	for _, vmi := range active {
		if vmis.IsReady(vmi) {
			st.ReadyReplicas++
		}
	}
	var want []kubevirtv1.VirtualMachineInstanceReplicaSetCondition
	if failure != nil {
		want = append(want, kubevirtv1.VirtualMachineInstanceReplicaSetCondition{
			Type: kubevirtv1.VirtualMachineInstanceReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			Reason: failReason, Message: failure.Error()})
	}
	if rs.Spec.Paused {
		want = append(want, kubevirtv1.VirtualMachineInstanceReplicaSetCondition{
			Type: kubevirtv1.VirtualMachineInstanceReplicaSetReplicaPaused, Status: corev1.ConditionTrue,
			Reason: "Paused", Message: "the replica set is paused: it neither creates nor deletes instances"})
	}
	for _, w := range want {
		w.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
		for _, o := range rs.Status.Conditions {
			if o.Type == w.Type && o.Status == w.Status {
				w.LastTransitionTime, w.LastProbeTime = o.LastTransitionTime, o.LastProbeTime
			}
		}
		st.Conditions = append(st.Conditions, w)
	}
	return st
}
