package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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

func TestValidateVirtualMachineInstanceMigrationSource(t *testing.T) {
	running := func(mutate ...func(*kubevirtv1.VirtualMachineInstance)) *kubevirtv1.VirtualMachineInstance {
		vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "default"}}
		vmi.Status.Phase = kubevirtv1.Running
		vmi.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{Type: kubevirtv1.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionTrue}}
		for _, m := range mutate {
			m(vmi)
		}
		return vmi
	}
	other := func(uid, vmiName string, phase kubevirtv1.VirtualMachineInstanceMigrationPhase) *kubevirtv1.VirtualMachineInstanceMigration {
		return &kubevirtv1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)},
			Spec: kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: vmiName}, Status: kubevirtv1.VirtualMachineInstanceMigrationStatus{Phase: phase}}
	}
	cases := []struct {
		name    string
		vmi     *kubevirtv1.VirtualMachineInstance
		others  []*kubevirtv1.VirtualMachineInstanceMigration
		want    []string
		wantMsg string
	}{
		{name: "running and migratable", vmi: running()},
		{name: "no LiveMigratable condition yet (as KubeVirt: only False refuses)", vmi: running(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.Conditions = nil })},
		{name: "not running yet (the controller fails it)", vmi: running(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.Phase = kubevirtv1.Scheduled })},
		{name: "missing", want: []string{"Invalid:spec.vmiName"}, wantMsg: `the VMI "default/vm1" does not exist`},
		{name: "succeeded", vmi: running(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.Phase = kubevirtv1.Succeeded }),
			want: []string{"Invalid:spec.vmiName"}, wantMsg: "Cannot migrate VMI in finalized state."},
		{name: "failed", vmi: running(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.Phase = kubevirtv1.Failed }),
			want: []string{"Invalid:spec.vmiName"}, wantMsg: "Cannot migrate VMI in finalized state."},
		{name: "being deleted", vmi: running(func(v *kubevirtv1.VirtualMachineInstance) { v.DeletionTimestamp = &metav1.Time{} }),
			want: []string{"Invalid:spec.vmiName"}, wantMsg: "being deleted"},
		{name: "hotplugged volumes", vmi: running(func(v *kubevirtv1.VirtualMachineInstance) {
			v.Spec.Volumes = []kubevirtv1.Volume{{Name: "hot", VolumeSource: kubevirtv1.VolumeSource{
				PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{Hotpluggable: true}}}}
		}), want: []string{"Invalid:spec.vmiName"}, wantMsg: "Reason: HotplugVolumesNotLiveMigratable, Message: the VMI has hotplugged volumes (hot)"},
		{name: "not migratable", vmi: running(func(v *kubevirtv1.VirtualMachineInstance) {
			v.Status.Conditions[0].Status = corev1.ConditionFalse
			v.Status.Conditions[0].Reason = "DisksNotLiveMigratable"
			v.Status.Conditions[0].Message = "cannot migrate VMI: hostDisk volume hd is on this node"
		}), want: []string{"Invalid:spec.vmiName"},
			wantMsg: "Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: cannot migrate VMI: hostDisk volume hd is on this node"},
		{name: "another migration in flight", vmi: running(), others: []*kubevirtv1.VirtualMachineInstanceMigration{other("m0", "vm1", kubevirtv1.MigrationRunning)},
			want: []string{"Forbidden:spec.vmiName"}, wantMsg: "in-flight migration detected. Active migration job (m0) is currently already in progress for VMI vm1."},
		{name: "another one not looked at yet", vmi: running(), others: []*kubevirtv1.VirtualMachineInstanceMigration{other("m0", "vm1", "")},
			want: []string{"Forbidden:spec.vmiName"}, wantMsg: "in-flight"},
		{name: "finished migrations do not count", vmi: running(), others: []*kubevirtv1.VirtualMachineInstanceMigration{
			other("m0", "vm1", kubevirtv1.MigrationSucceeded), other("m1", "vm1", kubevirtv1.MigrationFailed)}},
		{name: "migrations of other instances do not count", vmi: running(), others: []*kubevirtv1.VirtualMachineInstanceMigration{other("m0", "vm2", kubevirtv1.MigrationRunning)}},
		{name: "itself does not count", vmi: running(), others: []*kubevirtv1.VirtualMachineInstanceMigration{other("self", "vm1", "")}},
		{name: "one of the same name does not count (the create fails with AlreadyExists)", vmi: running(),
			others: []*kubevirtv1.VirtualMachineInstanceMigration{func() *kubevirtv1.VirtualMachineInstanceMigration {
				o := other("older", "vm1", kubevirtv1.MigrationRunning)
				o.Name, o.Namespace = "migrate-vm1", "default"
				return o
			}()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := validMigration()
			m.UID = "self"
			errs := ValidateVirtualMachineInstanceMigrationSource(m, tc.vmi, tc.others)
			compareErrs(t, tc.want, errs)
			if tc.wantMsg != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.wantMsg)) {
				t.Errorf("errors %v do not say %q", errs, tc.wantMsg)
			}
		})
	}
}
