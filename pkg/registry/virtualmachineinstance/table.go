package virtualmachineinstance

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Table lays out `kubectl get vmi` as KubeVirt does: NAME, AGE, PHASE, IP, NODENAME, READY.
func Table() store.Table[*kubevirtv1.VirtualMachineInstance] {
	return store.Table[*kubevirtv1.VirtualMachineInstance]{
		Columns: []metav1.TableColumnDefinition{
			store.AgeColumn,
			{Name: "Phase", Type: "string", Description: "The instance's lifecycle phase (status.phase): Pending, Scheduling, Scheduled, Running, Succeeded, Failed."},
			{Name: "IP", Type: "string", Description: "The primary IP address of the first interface (status.interfaces[0].ipAddress)."},
			{Name: "NodeName", Type: "string", Description: "The node the instance runs on (status.nodeName)."},
			{Name: "Ready", Type: "string", Description: "Whether the instance is ready (the Ready condition)."},
		},
		Cells: func(vmi *kubevirtv1.VirtualMachineInstance) []interface{} {
			ip := ""
			if len(vmi.Status.Interfaces) > 0 {
				ip = vmi.Status.Interfaces[0].IP
			}
			return []interface{}{store.Age(vmi.CreationTimestamp), string(vmi.Status.Phase), ip, vmi.Status.NodeName, readyCondition(vmi.Status.Conditions)}
		},
	}
}

func readyCondition(conds []kubevirtv1.VirtualMachineInstanceCondition) string {
	for _, c := range conds {
		if c.Type == kubevirtv1.VirtualMachineInstanceReady {
			return string(c.Status)
		}
	}
	return "False"
}
