package virtualmachine

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Table lays out `kubectl get vm` as KubeVirt does: NAME, AGE, STATUS, READY.
func Table() store.Table[*kubevirtv1.VirtualMachine] {
	return store.Table[*kubevirtv1.VirtualMachine]{
		Columns: []metav1.TableColumnDefinition{
			store.AgeColumn,
			{Name: "Status", Type: "string", Description: "A one-word summary of the virtual machine's state (status.printableStatus): Stopped, Starting, Running, ..."},
			{Name: "Ready", Type: "string", Description: "Whether the virtual machine's instance is running and ready (the Ready condition)."},
		},
		Cells: func(vm *kubevirtv1.VirtualMachine) []interface{} {
			return []interface{}{store.Age(vm.CreationTimestamp), string(vm.Status.PrintableStatus), readyCondition(vm.Status.Conditions)}
		},
	}
}

// readyCondition renders the Ready condition's status, or False when the VM reports none.
func readyCondition(conds []kubevirtv1.VirtualMachineCondition) string {
	for _, c := range conds {
		if c.Type == kubevirtv1.VirtualMachineReady {
			return string(c.Status)
		}
	}
	return "False"
}
