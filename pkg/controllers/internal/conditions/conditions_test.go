package conditions

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestVMIFindAndSet(t *testing.T) {
	st := &kubevirtv1.VirtualMachineInstanceStatus{}
	if c := VMI(st, kubevirtv1.VirtualMachineInstanceReady); c != nil {
		t.Fatalf("found %v in an empty status", c)
	}
	SetVMI(st, kubevirtv1.VirtualMachineInstanceCondition{Type: kubevirtv1.VirtualMachineInstanceReady, Status: corev1.ConditionFalse})
	SetVMI(st, kubevirtv1.VirtualMachineInstanceCondition{Type: kubevirtv1.VirtualMachineInstancePaused, Status: corev1.ConditionTrue})
	SetVMI(st, kubevirtv1.VirtualMachineInstanceCondition{Type: kubevirtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue})
	want := []kubevirtv1.VirtualMachineInstanceCondition{
		{Type: kubevirtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue},
		{Type: kubevirtv1.VirtualMachineInstancePaused, Status: corev1.ConditionTrue},
	}
	if d := cmp.Diff(want, st.Conditions); d != "" {
		t.Fatalf("conditions (-want +got):\n%s", d)
	}
	// The condition found is the status's own: writing to it writes the status.
	VMI(st, kubevirtv1.VirtualMachineInstancePaused).Reason = "x"
	if st.Conditions[1].Reason != "x" {
		t.Error("VMI returned a copy")
	}
}

func TestPod(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionFalse},
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
	}}}
	if c := Pod(pod, corev1.PodScheduled); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("PodScheduled = %v", c)
	}
	if c := Pod(pod, corev1.ContainersReady); c != nil {
		t.Errorf("ContainersReady = %v, want none", c)
	}
}

func TestSetMigrationKeepsTheTransitionTimeOfAnUnchangedStatus(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	t1 := t0.Add(90*time.Second + 300*time.Millisecond)
	failed := kubevirtv1.VirtualMachineInstanceMigrationConditionType("Failed")
	st := &kubevirtv1.VirtualMachineInstanceMigrationStatus{}
	SetMigration(st, kubevirtv1.VirtualMachineInstanceMigrationCondition{Type: failed, Status: corev1.ConditionFalse}, t0)
	SetMigration(st, kubevirtv1.VirtualMachineInstanceMigrationCondition{Type: failed, Status: corev1.ConditionFalse, Reason: "again"}, t1)
	if got := Migration(st, failed); got == nil || !got.LastTransitionTime.Time.Equal(t0) || got.Reason != "again" {
		t.Fatalf("after the same status: %+v, want the transition time %s and the new reason", got, t0)
	}
	SetMigration(st, kubevirtv1.VirtualMachineInstanceMigrationCondition{Type: failed, Status: corev1.ConditionTrue}, t1)
	if got := Migration(st, failed); !got.LastTransitionTime.Time.Equal(t1.Truncate(time.Second)) {
		t.Fatalf("after a new status: transition time %s, want %s", got.LastTransitionTime, t1.Truncate(time.Second))
	}
	given := metav1.NewTime(t0)
	other := kubevirtv1.VirtualMachineInstanceMigrationConditionType("Other")
	SetMigration(st, kubevirtv1.VirtualMachineInstanceMigrationCondition{Type: other, Status: corev1.ConditionTrue, LastTransitionTime: given}, t1)
	if got := Migration(st, other); !got.LastTransitionTime.Equal(&given) {
		t.Errorf("a given transition time was replaced: %s", got.LastTransitionTime)
	}
	if len(st.Conditions) != 2 {
		t.Errorf("%d conditions, want 2", len(st.Conditions))
	}
}

func TestDropMigration(t *testing.T) {
	a := kubevirtv1.VirtualMachineInstanceMigrationConditionType("A")
	b := kubevirtv1.VirtualMachineInstanceMigrationConditionType("B")
	st := &kubevirtv1.VirtualMachineInstanceMigrationStatus{Conditions: []kubevirtv1.VirtualMachineInstanceMigrationCondition{{Type: a}, {Type: b}, {Type: a}}}
	DropMigration(st, a)
	if d := cmp.Diff([]kubevirtv1.VirtualMachineInstanceMigrationCondition{{Type: b}}, st.Conditions); d != "" {
		t.Errorf("after dropping A (-want +got):\n%s", d)
	}
	DropMigration(st, b)
	if st.Conditions != nil {
		t.Errorf("no condition left is %#v, want nil", st.Conditions)
	}
	DropMigration(st, b) // nothing to drop
}
