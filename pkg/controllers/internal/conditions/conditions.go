// Package conditions finds, sets and drops the conditions of the objects the controllers read
// and write. Each kind has a condition type of its own with the same shape (a type, a status,
// times, a reason and a message); one generic implementation serves them all, and the typed
// functions name the ones the controllers use, so that no controller loops over conditions
// itself.
package conditions

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// find returns the element of conds whose type (typeOf) is t, or nil; it points into conds.
func find[C any, T comparable](conds []C, t T, typeOf func(*C) T) *C {
	for i := range conds {
		if typeOf(&conds[i]) == t {
			return &conds[i]
		}
	}
	return nil
}

// set replaces the element of *conds of c's type by c, or appends c.
func set[C any, T comparable](conds *[]C, c C, typeOf func(*C) T) {
	if old := find(*conds, typeOf(&c), typeOf); old != nil {
		*old = c
		return
	}
	*conds = append(*conds, c)
}

// drop removes the elements of type t from *conds, in place; none left is nil.
func drop[C any, T comparable](conds *[]C, t T, typeOf func(*C) T) {
	out := (*conds)[:0]
	for _, c := range *conds {
		if typeOf(&c) != t {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	*conds = out
}

func vmiType(c *kubevirtv1.VirtualMachineInstanceCondition) kubevirtv1.VirtualMachineInstanceConditionType {
	return c.Type
}

func migrationType(c *kubevirtv1.VirtualMachineInstanceMigrationCondition) kubevirtv1.VirtualMachineInstanceMigrationConditionType {
	return c.Type
}

func podType(c *corev1.PodCondition) corev1.PodConditionType { return c.Type }

// VMI returns the instance status's condition of type t, or nil.
func VMI(st *kubevirtv1.VirtualMachineInstanceStatus, t kubevirtv1.VirtualMachineInstanceConditionType) *kubevirtv1.VirtualMachineInstanceCondition {
	return find(st.Conditions, t, vmiType)
}

// SetVMI replaces the instance status's condition of c's type by c, or adds c.
func SetVMI(st *kubevirtv1.VirtualMachineInstanceStatus, c kubevirtv1.VirtualMachineInstanceCondition) {
	set(&st.Conditions, c, vmiType)
}

// DropVMI removes the instance status's condition of type t, if any.
func DropVMI(st *kubevirtv1.VirtualMachineInstanceStatus, t kubevirtv1.VirtualMachineInstanceConditionType) {
	drop(&st.Conditions, t, vmiType)
}

// Pod returns the pod's condition of type t, or nil.
func Pod(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	return find(pod.Status.Conditions, t, podType)
}

// Migration returns the migration status's condition of type t, or nil.
func Migration(st *kubevirtv1.VirtualMachineInstanceMigrationStatus, t kubevirtv1.VirtualMachineInstanceMigrationConditionType) *kubevirtv1.VirtualMachineInstanceMigrationCondition {
	return find(st.Conditions, t, migrationType)
}

// SetMigration adds or replaces a migration's condition; an unchanged status keeps its
// transition time (and probe time), so that repeating an observation writes nothing. A
// condition without a transition time gets now, to the second.
func SetMigration(st *kubevirtv1.VirtualMachineInstanceMigrationStatus, c kubevirtv1.VirtualMachineInstanceMigrationCondition, now time.Time) {
	if old := Migration(st, c.Type); old != nil && old.Status == c.Status {
		c.LastTransitionTime, c.LastProbeTime = old.LastTransitionTime, old.LastProbeTime
	}
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	}
	set(&st.Conditions, c, migrationType)
}

// DropMigration removes the migration's conditions of type t.
func DropMigration(st *kubevirtv1.VirtualMachineInstanceMigrationStatus, t kubevirtv1.VirtualMachineInstanceMigrationConditionType) {
	drop(&st.Conditions, t, migrationType)
}
