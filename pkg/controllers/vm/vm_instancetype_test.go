package vm

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/instancetype/revision"
)

func testInstancetype(guest int32, memory string) *instancetypev1beta1.VirtualMachineClusterInstancetype {
	return &instancetypev1beta1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "u1.small", UID: "it-uid", Generation: 1},
		Spec: instancetypev1beta1.VirtualMachineInstancetypeSpec{
			CPU:    instancetypev1beta1.CPUInstancetype{Guest: guest},
			Memory: instancetypev1beta1.MemoryInstancetype{Guest: resource.MustParse(memory)},
		},
	}
}

func testPreference() *instancetypev1beta1.VirtualMachinePreference {
	cores := instancetypev1beta1.Cores
	return &instancetypev1beta1.VirtualMachinePreference{
		ObjectMeta: metav1.ObjectMeta{Name: "cores", Namespace: "default", UID: "pref-uid", Generation: 2},
		Spec:       instancetypev1beta1.VirtualMachinePreferenceSpec{CPU: &instancetypev1beta1.CPUPreferences{PreferredCPUTopology: &cores}},
	}
}

func withInstancetype() vmOpt {
	return func(vm *kubevirtv1.VirtualMachine) {
		vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "u1.small", Kind: "virtualmachineclusterinstancetype"}
		vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "cores", Kind: "VirtualMachinePreference"}
	}
}

// syncErr runs one sync that is expected to fail and returns its error.
func (f *fixture) syncErr() error {
	f.t.Helper()
	_, err := f.c.sync(context.Background(), "default/vm-cirros")
	if err == nil {
		f.t.Fatal("sync succeeded; want an error")
	}
	return err
}

func (f *fixture) revisionNames() []string {
	f.t.Helper()
	list, err := f.kube.AppsV1().ControllerRevisions("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var names []string
	for _, r := range list.Items {
		names = append(names, r.Name)
	}
	return names
}

func TestSyncCapturesRevisionsAndExpandsTheInstance(t *testing.T) {
	vm := newVM(strategy(kubevirtv1.RunStrategyAlways), withInstancetype())
	f := newFixture(t, vm, testInstancetype(2, "256Mi"), testPreference())

	if diff := cmp.Diff([]string{"create virtualmachineinstances", "update virtualmachines/status"}, f.sync()); diff != "" {
		t.Errorf("first sync's kubevirt.io writes (-want +got):\n%s", diff)
	}
	itRev, prefRev := "vm-cirros-u1.small-v1beta1-it-uid-1", "vm-cirros-cores-v1beta1-pref-uid-2"
	if diff := cmp.Diff([]string{prefRev, itRev}, f.revisionNames()); diff != "" {
		t.Errorf("revisions (-want +got):\n%s", diff)
	}
	status := f.storedVM().Status
	wantIt := &kubevirtv1.InstancetypeStatusRef{Name: "u1.small", Kind: "virtualmachineclusterinstancetype",
		ControllerRevisionRef: &kubevirtv1.ControllerRevisionRef{Name: itRev}}
	wantPref := &kubevirtv1.InstancetypeStatusRef{Name: "cores", Kind: "VirtualMachinePreference",
		ControllerRevisionRef: &kubevirtv1.ControllerRevisionRef{Name: prefRev}}
	if diff := cmp.Diff(wantIt, status.InstancetypeRef); diff != "" {
		t.Errorf("status.instancetypeRef (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantPref, status.PreferenceRef); diff != "" {
		t.Errorf("status.preferenceRef (-want +got):\n%s", diff)
	}

	vmi, err := f.client.KubevirtV1().VirtualMachineInstances("default").Get(context.Background(), "vm-cirros", metaGet)
	if err != nil {
		t.Fatal(err)
	}
	cpu := vmi.Spec.Domain.CPU
	if cpu == nil || cpu.Cores != 2 || cpu.Sockets != 1 || cpu.Threads != 1 {
		t.Errorf("instance CPU %+v; want the preference's cores topology of 2 vCPUs", cpu)
	}
	if m := vmi.Spec.Domain.Memory; m == nil || m.Guest == nil || m.Guest.String() != "256Mi" {
		t.Errorf("instance memory %+v; want 256Mi", m)
	}
	if vmi.Annotations["kubevirt.io/cluster-instancetype-name"] != "u1.small" || vmi.Annotations["kubevirt.io/preference-name"] != "cores" {
		t.Errorf("instance annotations %v", vmi.Annotations)
	}
}

func TestSyncExpandsFromTheRecordedRevision(t *testing.T) {
	vm := newVM(strategy(kubevirtv1.RunStrategyAlways), withInstancetype())
	// The revision captured 4 vCPUs; the instance type now says 1.
	old, err := revision.New(vm, testInstancetype(4, "512Mi"))
	if err != nil {
		t.Fatal(err)
	}
	vm.Status.InstancetypeRef = &kubevirtv1.InstancetypeStatusRef{Name: "u1.small", Kind: "virtualmachineclusterinstancetype",
		ControllerRevisionRef: &kubevirtv1.ControllerRevisionRef{Name: old.Name}}
	f := newFixture(t, vm, testInstancetype(1, "128Mi"), testPreference())
	if _, err := f.kube.AppsV1().ControllerRevisions("default").Create(context.Background(), old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.sync()

	vmi, err := f.client.KubevirtV1().VirtualMachineInstances("default").Get(context.Background(), "vm-cirros", metaGet)
	if err != nil {
		t.Fatal(err)
	}
	if cpu := vmi.Spec.Domain.CPU; cpu == nil || cpu.Cores != 4 {
		t.Errorf("instance CPU %+v; want the revision's 4 vCPUs", cpu)
	}
	if got := f.storedVM().Status.InstancetypeRef.ControllerRevisionRef.Name; got != old.Name {
		t.Errorf("instancetypeRef revision %s; want %s kept", got, old.Name)
	}
	if n := len(f.revisionNames()); n != 2 {
		t.Errorf("%d revisions; want the recorded one and the preference's", n)
	}
}

func TestSyncWithoutItsInstancetypeCreatesNothing(t *testing.T) {
	vm := newVM(strategy(kubevirtv1.RunStrategyAlways), withInstancetype())
	f := newFixture(t, vm, testPreference())

	err := f.syncErr()
	if !strings.Contains(err.Error(), "failure to find instancetype") {
		t.Errorf("sync error %v", err)
	}
	if _, err := f.client.KubevirtV1().VirtualMachineInstances("default").Get(context.Background(), "vm-cirros", metaGet); err == nil {
		t.Error("an instance was created without its instance type")
	}
	var failure *kubevirtv1.VirtualMachineCondition
	for i, c := range f.storedVM().Status.Conditions {
		if c.Type == kubevirtv1.VirtualMachineFailure {
			failure = &f.storedVM().Status.Conditions[i]
		}
	}
	if failure == nil || failure.Status != corev1.ConditionTrue || failure.Reason != ReasonFailedCreate ||
		!strings.Contains(failure.Message, "failure to find instancetype") {
		t.Errorf("Failure condition %+v", failure)
	}
}

func TestSyncRefusesAConflictingTemplate(t *testing.T) {
	vm := newVM(strategy(kubevirtv1.RunStrategyAlways), withInstancetype())
	vm.Spec.Template.Spec.Domain.CPU = &kubevirtv1.CPU{Sockets: 2}
	f := newFixture(t, vm, testInstancetype(2, "256Mi"), testPreference())

	err := f.syncErr()
	if !strings.Contains(err.Error(), "spec.template.spec.domain.cpu.sockets") {
		t.Errorf("sync error %v; want the conflicting field named", err)
	}
	if _, err := f.client.KubevirtV1().VirtualMachineInstances("default").Get(context.Background(), "vm-cirros", metaGet); err == nil {
		t.Error("an instance was created from a conflicting template")
	}
}
