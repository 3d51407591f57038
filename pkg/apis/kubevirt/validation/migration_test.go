package validation

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func validMigration() *kubevirtv1.VirtualMachineInstanceMigration {
	return &kubevirtv1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "migrate-vm1", Namespace: "default"},
		Spec:       kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: "vm1"},
	}
}

func TestValidateVirtualMachineInstanceMigration(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(m *kubevirtv1.VirtualMachineInstanceMigration)
		want   []string
	}{
		{"valid", func(*kubevirtv1.VirtualMachineInstanceMigration) {}, nil},
		{"with node selector and priority", func(m *kubevirtv1.VirtualMachineInstanceMigration) {
			m.Spec.AddedNodeSelector = map[string]string{"kubernetes.io/hostname": "node-2"}
			m.Spec.Priority = ptr(kubevirtv1.PriorityUserTriggered)
		}, nil},
		{"no vmiName", func(m *kubevirtv1.VirtualMachineInstanceMigration) { m.Spec.VMIName = "" }, []string{"Required:spec.vmiName"}},
		{"bad vmiName", func(m *kubevirtv1.VirtualMachineInstanceMigration) { m.Spec.VMIName = "vm_1" }, []string{"Invalid:spec.vmiName"}},
		{"bad node selector", func(m *kubevirtv1.VirtualMachineInstanceMigration) {
			m.Spec.AddedNodeSelector = map[string]string{"zone": "a b"}
		}, []string{"Invalid:spec.addedNodeSelector"}},
		{"unknown priority", func(m *kubevirtv1.VirtualMachineInstanceMigration) {
			m.Spec.Priority = ptr(kubevirtv1.MigrationPriority("urgent"))
		}, []string{"NotSupported:spec.priority"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := validMigration()
			tc.mutate(m)
			compareErrs(t, tc.want, ValidateVirtualMachineInstanceMigration(m))
		})
	}
}

func TestValidateVirtualMachineInstanceMigrationUpdate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(m *kubevirtv1.VirtualMachineInstanceMigration)
		want   []string
	}{
		{"unchanged", func(*kubevirtv1.VirtualMachineInstanceMigration) {}, nil},
		{"labels change", func(m *kubevirtv1.VirtualMachineInstanceMigration) { m.Labels = map[string]string{"a": "b"} }, nil},
		{"other instance", func(m *kubevirtv1.VirtualMachineInstanceMigration) { m.Spec.VMIName = "vm2" }, []string{"Forbidden:spec"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := validMigration()
			tc.mutate(m)
			compareErrs(t, tc.want, ValidateVirtualMachineInstanceMigrationUpdate(m, validMigration()))
		})
	}
}

func TestValidateVirtualMachineInstanceMigrationStatusUpdate(t *testing.T) {
	cases := []struct {
		name   string
		status kubevirtv1.VirtualMachineInstanceMigrationStatus
		want   []string
	}{
		{"empty", kubevirtv1.VirtualMachineInstanceMigrationStatus{}, nil},
		{"running", kubevirtv1.VirtualMachineInstanceMigrationStatus{Phase: kubevirtv1.MigrationRunning}, nil},
		{"unknown phase", kubevirtv1.VirtualMachineInstanceMigrationStatus{Phase: "Flying"}, []string{"NotSupported:status.phase"}},
		{"condition without type", kubevirtv1.VirtualMachineInstanceMigrationStatus{
			Conditions: []kubevirtv1.VirtualMachineInstanceMigrationCondition{{Status: "True"}}},
			[]string{"Required:status.conditions[0].type"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := validMigration()
			m.Status = tc.status
			compareErrs(t, tc.want, ValidateVirtualMachineInstanceMigrationStatusUpdate(m, validMigration()))
		})
	}
}
