package storage

import (
	"encoding/json"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// vmVersion is a fresh decoded copy of vm, as each event of the storage's watch is.
func vmVersion(t *testing.T, vm *kubevirtv1.VirtualMachine) *kubevirtv1.VirtualMachine {
	t.Helper()
	data, err := json.Marshal(vm)
	if err != nil {
		t.Fatal(err)
	}
	out := &kubevirtv1.VirtualMachine{}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func withConditions(vm *kubevirtv1.VirtualMachine, reasons ...string) *kubevirtv1.VirtualMachine {
	vm = vm.DeepCopy()
	vm.Status.Conditions = nil
	for _, r := range reasons {
		vm.Status.Conditions = append(vm.Status.Conditions, kubevirtv1.VirtualMachineCondition{
			Type: kubevirtv1.VirtualMachineReady, Status: corev1.ConditionFalse, Reason: r})
	}
	return vm
}

func sameTemplate(a, b *kubevirtv1.VirtualMachine) bool { return a.Spec.Template == b.Spec.Template }

func sameConditions(a, b *kubevirtv1.VirtualMachine) bool {
	return len(a.Status.Conditions) > 0 && len(b.Status.Conditions) > 0 &&
		&a.Status.Conditions[0] == &b.Status.Conditions[0]
}

// A status write's version shares the spec of the version before it, a spec write's version
// the status, a delete's both; the first version of a name has nothing to share with.
func TestVersionsShareUnchangedParts(t *testing.T) {
	table := newVersionTable()
	base := withConditions(shapedVM("vm-a", "1Gi"), "Starting")
	base.Labels = map[string]string{"app": "vm-a"}

	created := vmVersion(t, base)
	table.observed(watch.Event{Type: watch.Added, Object: created})

	statusWrite := vmVersion(t, withConditions(base, "Running"))
	table.observed(watch.Event{Type: watch.Modified, Object: statusWrite})
	if !sameTemplate(created, statusWrite) {
		t.Error("a status write's version has a spec of its own")
	}
	if sameConditions(created, statusWrite) {
		t.Fatal("a changed status was shared")
	}

	changed := withConditions(base, "Running")
	changed.Spec.Template.Spec.Domain.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("2Gi")
	specWrite := vmVersion(t, changed)
	table.observed(watch.Event{Type: watch.Modified, Object: specWrite})
	if sameTemplate(statusWrite, specWrite) {
		t.Fatal("a changed spec was shared")
	}
	if !sameConditions(statusWrite, specWrite) {
		t.Error("a spec write's version has a status of its own")
	}
	if got := specWrite.Spec.Template.Spec.Domain.Resources.Requests.Memory().String(); got != "2Gi" {
		t.Errorf("the spec write's memory is %s, want 2Gi", got)
	}

	deleted := vmVersion(t, specWrite)
	table.observed(watch.Event{Type: watch.Deleted, Object: deleted})
	if !sameTemplate(specWrite, deleted) || !sameConditions(specWrite, deleted) {
		t.Error("a delete's version does not share the last version's spec and status")
	}

	recreated := vmVersion(t, specWrite)
	table.observed(watch.Event{Type: watch.Added, Object: recreated})
	if sameTemplate(deleted, recreated) {
		t.Error("a deleted name was remembered")
	}

	if !sameMap(specWrite.Labels, statusWrite.Labels) {
		t.Error("a spec write's version has labels of its own")
	}

	// Another name, or a bookmark, has nothing to do with vm-a.
	other := vmVersion(t, shapedVM("vm-b", "2Gi"))
	table.observed(watch.Event{Type: watch.Added, Object: other})
	table.observed(watch.Event{Type: watch.Bookmark, Object: vmVersion(t, shapedVM("vm-a", "2Gi"))})
	if sameTemplate(other, recreated) || table.last[objectName{"ns", "vm-a"}] != recreated {
		t.Error("versions of different names, or a bookmark, were mixed")
	}
}

// Parts are shared only when they are equal as values, not merely equal in meaning: a cached
// version must serialize exactly as etcd holds it.
func TestVersionsShareOnlyIdenticalParts(t *testing.T) {
	table := newVersionTable()
	vm := shapedVM("vm-a", "1Gi")
	vm.Labels = map[string]string{"app": "a"}
	first := vmVersion(t, vm)
	table.observed(watch.Event{Type: watch.Added, Object: first})
	vm = shapedVM("vm-a", "1073741824")
	vm.Labels = map[string]string{"app": "b"}
	second := vmVersion(t, vm)
	table.observed(watch.Event{Type: watch.Modified, Object: second})
	if sameTemplate(first, second) {
		t.Fatal("1Gi and 1073741824 were shared")
	}
	if second.Labels["app"] != "b" {
		t.Fatalf("the second version's label is %q, want b", second.Labels["app"])
	}
	data, err := json.Marshal(second.Spec.Template.Spec.Domain.Resources.Requests)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"cpu":"500m","memory":"1073741824"}`; string(data) != want {
		t.Errorf("the second version's requests serialize as %s, want %s", data, want)
	}
}

// A list's first page starts the table afresh; its further pages add to it.
func TestVersionTableFollowsLists(t *testing.T) {
	table := newVersionTable()
	gone := vmVersion(t, shapedVM("vm-gone", "1Gi"))
	table.observed(watch.Event{Type: watch.Added, Object: gone})

	a, b := vmVersion(t, shapedVM("vm-a", "1Gi")), vmVersion(t, shapedVM("vm-b", "1Gi"))
	table.listed([]runtime.Object{a}, true)
	table.listed([]runtime.Object{b}, false)
	if len(table.last) != 2 || table.last[objectName{"ns", "vm-a"}] != a || table.last[objectName{"ns", "vm-b"}] != b {
		t.Fatalf("after a list of two pages the table holds %v", table.last)
	}
	next := vmVersion(t, shapedVM("vm-b", "1Gi"))
	table.observed(watch.Event{Type: watch.Modified, Object: next})
	if !sameTemplate(b, next) {
		t.Error("a version after the list does not share the listed version's spec")
	}
}

// The instance and its other kinds share as the VM does.
func TestInstanceVersionsShareUnchangedParts(t *testing.T) {
	prev := &kubevirtv1.VirtualMachineInstance{Spec: shapedVM("vmi", "1Gi").Spec.Template.Spec,
		Status: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduled, NodeName: "node-1"}}
	prev.Name, prev.Namespace = "vmi", "ns"
	cur := prev.DeepCopy()
	cur.Status.Phase = kubevirtv1.Running
	shareUnchanged(prev, cur)
	if !sameMap(prev.Spec.NodeSelector, cur.Spec.NodeSelector) {
		t.Error("an instance's status write has a spec of its own")
	}
	if cur.Status.Phase != kubevirtv1.Running {
		t.Errorf("the instance's phase is %s, want Running", cur.Status.Phase)
	}

	m := &kubevirtv1.VirtualMachineInstanceMigration{Spec: kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: "vmi"}}
	mCur := m.DeepCopy()
	shareUnchanged(prev, mCur) // another kind: nothing happens
	shareUnchanged(m, mCur)
	if mCur.Spec.VMIName != "vmi" {
		t.Errorf("the migration's instance is %q", mCur.Spec.VMIName)
	}
}

// BenchmarkVersionObserved is the cost the feed adds to a status write's event of a realistic
// VM (testdata/vm.json: the integration tests' VirtualMachine, framework.VMYAML, as JSON): one
// strict comparison of spec and status.
func BenchmarkVersionObserved(b *testing.B) {
	data, err := os.ReadFile("testdata/vm.json")
	if err != nil {
		b.Fatal(err)
	}
	versions := make([]*kubevirtv1.VirtualMachine, 2)
	for i := range versions {
		versions[i] = &kubevirtv1.VirtualMachine{}
		if err := json.Unmarshal(data, versions[i]); err != nil {
			b.Fatal(err)
		}
	}
	table := newVersionTable()
	table.observed(watch.Event{Type: watch.Added, Object: versions[0]})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Alternate two decoded versions: each time the spec is compared in full and shared.
		table.observed(watch.Event{Type: watch.Modified, Object: versions[1-i%2]})
	}
}
