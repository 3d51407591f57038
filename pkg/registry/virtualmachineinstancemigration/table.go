package virtualmachineinstancemigration

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Table lays out `kubectl get vmim` as KubeVirt does: NAME, PHASE, VMI, AGE.
func Table() store.Table[*kubevirtv1.VirtualMachineInstanceMigration] {
	return store.Table[*kubevirtv1.VirtualMachineInstanceMigration]{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Phase", Type: "string", Description: "The migration's phase (status.phase)."},
			{Name: "VMI", Type: "string", Description: "The instance being migrated (spec.vmiName)."},
			store.AgeColumn,
		},
		Cells: func(m *kubevirtv1.VirtualMachineInstanceMigration) []interface{} {
			return []interface{}{string(m.Status.Phase), m.Spec.VMIName, store.Age(m.CreationTimestamp)}
		},
	}
}
