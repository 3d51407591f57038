package virtualmachineinstancereplicaset

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Table lays out `kubectl get vmirs` as KubeVirt does: NAME, DESIRED, CURRENT, READY, AGE.
func Table() store.Table[*kubevirtv1.VirtualMachineInstanceReplicaSet] {
	return store.Table[*kubevirtv1.VirtualMachineInstanceReplicaSet]{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Desired", Type: "integer", Description: "Number of instances wanted (spec.replicas)."},
			{Name: "Current", Type: "integer", Description: "Number of instances that exist (status.replicas)."},
			{Name: "Ready", Type: "integer", Description: "Number of instances that are ready (status.readyReplicas)."},
			store.AgeColumn,
		},
		Cells: func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) []interface{} {
			desired := int64(1)
			if rs.Spec.Replicas != nil {
				desired = int64(*rs.Spec.Replicas)
			}
			return []interface{}{desired, int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas), store.Age(rs.CreationTimestamp)}
		},
	}
}
