package virtualmachine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/defaulting"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

func testVM() *kubevirtv1.VirtualMachine {
	halted := kubevirtv1.RunStrategyHalted
	return &kubevirtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "ns1", Labels: map[string]string{"a": "b"}},
		Spec: kubevirtv1.VirtualMachineSpec{
			RunStrategy: &halted,
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
				Spec: kubevirtv1.VirtualMachineInstanceSpec{
					Domain: kubevirtv1.DomainSpec{Resources: kubevirtv1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
					}},
				},
			},
		},
		Status: kubevirtv1.VirtualMachineStatus{PrintableStatus: kubevirtv1.VirtualMachineStatusRunning, Ready: true},
	}
}

func TestPrepareForCreate(t *testing.T) {
	main, _ := store.NewStrategies(nil, Rules)
	vm := testVM()
	main.PrepareForCreate(context.Background(), vm)
	if vm.Generation != 1 {
		t.Errorf("generation = %d, want 1", vm.Generation)
	}
	if diff := cmp.Diff(kubevirtv1.VirtualMachineStatus{}, vm.Status); diff != "" {
		t.Errorf("status not cleared (-want +got):\n%s", diff)
	}
	if got, want := vm.Spec.Template.Spec.Domain.Firmware.UUID, defaulting.FirmwareUUID("ns1", "vm1"); got != want {
		t.Errorf("firmware uuid = %q, want %q", got, want)
	}
}

func TestPrepareForUpdate(t *testing.T) {
	main, _ := store.NewStrategies(nil, Rules)
	old := testVM()
	old.Generation = 4
	old.Spec.Template.Spec.Domain.Firmware = &kubevirtv1.Firmware{UUID: "11111111-2222-3333-4444-555555555555"}

	cases := []struct {
		name    string
		mutate  func(vm *kubevirtv1.VirtualMachine)
		wantGen int64
	}{
		{"metadata only keeps the generation", func(vm *kubevirtv1.VirtualMachine) { vm.Labels = map[string]string{"x": "y"} }, 4},
		{"spec change bumps the generation", func(vm *kubevirtv1.VirtualMachine) {
			always := kubevirtv1.RunStrategyAlways
			vm.Spec.RunStrategy = &always
		}, 5},
		{"dropping the firmware uuid keeps the old one", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.Template.Spec.Domain.Firmware = nil }, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vm := old.DeepCopy()
			vm.Status = kubevirtv1.VirtualMachineStatus{PrintableStatus: kubevirtv1.VirtualMachineStatusStopped}
			c.mutate(vm)
			main.PrepareForUpdate(context.Background(), vm, old)
			if vm.Generation != c.wantGen {
				t.Errorf("generation = %d, want %d", vm.Generation, c.wantGen)
			}
			if diff := cmp.Diff(old.Status, vm.Status); diff != "" {
				t.Errorf("status changed through the main resource (-old +new):\n%s", diff)
			}
			if got := vm.Spec.Template.Spec.Domain.Firmware.UUID; got != types.UID("11111111-2222-3333-4444-555555555555") {
				t.Errorf("firmware uuid = %q, want the old one", got)
			}
		})
	}
}

func TestStatusStrategyKeepsSpecAndMetadata(t *testing.T) {
	_, status := store.NewStrategies(nil, Rules)
	old := testVM()
	vm := old.DeepCopy()
	vm.Spec.RunStrategy = nil
	vm.Labels = map[string]string{"changed": "through-status"}
	vm.Status = kubevirtv1.VirtualMachineStatus{PrintableStatus: kubevirtv1.VirtualMachineStatusStopped}
	status.PrepareForUpdate(context.Background(), vm, old)
	if diff := cmp.Diff(old.Spec, vm.Spec); diff != "" {
		t.Errorf("spec changed through /status (-old +new):\n%s", diff)
	}
	if diff := cmp.Diff(old.Labels, vm.Labels); diff != "" {
		t.Errorf("labels changed through /status (-old +new):\n%s", diff)
	}
	if vm.Status.PrintableStatus != kubevirtv1.VirtualMachineStatusStopped {
		t.Errorf("status change lost: %q", vm.Status.PrintableStatus)
	}
}

func TestResetFields(t *testing.T) {
	main, status := store.NewStrategies(nil, Rules)
	for _, v := range []string{"kubevirt.io/v1", "kubevirt.io/v1alpha3"} {
		if got := main.GetResetFields()[fieldpathVersion(v)].String(); got != ".status" {
			t.Errorf("main reset fields for %s = %q, want .status", v, got)
		}
		if got := status.GetResetFields()[fieldpathVersion(v)]; got == nil || !got.Has(mustPath("spec")) {
			t.Errorf("status reset fields for %s lack .spec: %v", v, got)
		}
	}
}

func TestSelectableFields(t *testing.T) {
	vm := testVM()
	_, got, err := GetAttrs(vm)
	if err != nil {
		t.Fatal(err)
	}
	want := fields.Set{"metadata.name": "vm1", "metadata.namespace": "ns1", "status.printableStatus": "Running"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("selectable fields (-want +got):\n%s", diff)
	}
	if _, _, err := GetAttrs(&kubevirtv1.VirtualMachineInstance{}); err == nil {
		t.Errorf("GetAttrs accepted a VirtualMachineInstance")
	}
}

func TestTable(t *testing.T) {
	vm := testVM()
	vm.CreationTimestamp = metav1.Now()
	vm.Status.Conditions = []kubevirtv1.VirtualMachineCondition{{Type: kubevirtv1.VirtualMachineReady, Status: corev1.ConditionTrue}}
	table, err := Table().ConvertToTable(context.Background(), &kubevirtv1.VirtualMachineList{Items: []kubevirtv1.VirtualMachine{*vm}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Age", "Status", "Ready"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"vm1", "0s", "Running", "True"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
