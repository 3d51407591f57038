package virtualmachineinstance

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/defaulting"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

func running() *kubevirtv1.VirtualMachineInstance {
	return &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vmi1", Namespace: "ns1", CreationTimestamp: metav1.Now()},
		Status: kubevirtv1.VirtualMachineInstanceStatus{
			Phase:      kubevirtv1.Running,
			NodeName:   "node-a",
			Interfaces: []kubevirtv1.VirtualMachineInstanceNetworkInterface{{Name: "default", IP: "10.88.0.9"}},
			Conditions: []kubevirtv1.VirtualMachineInstanceCondition{{Type: kubevirtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue}},
		},
	}
}

func TestSelectableFields(t *testing.T) {
	_, got, err := GetAttrs(running())
	if err != nil {
		t.Fatal(err)
	}
	want := fields.Set{"metadata.name": "vmi1", "metadata.namespace": "ns1", "status.phase": "Running", "status.nodeName": "node-a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("selectable fields (-want +got):\n%s", diff)
	}
}

func TestPrepareForCreateAndStatus(t *testing.T) {
	main, status := store.NewStrategies(nil, Rules)
	vmi := running()
	main.PrepareForCreate(context.Background(), vmi)
	if vmi.Status.Phase != "" || vmi.Status.NodeName != "" {
		t.Errorf("status not cleared on create: %+v", vmi.Status)
	}
	if vmi.Spec.Domain.Firmware == nil || vmi.Spec.Domain.Firmware.UUID != defaulting.FirmwareUUID("ns1", "vmi1") {
		t.Errorf("firmware uuid not derived from namespace/name: %+v", vmi.Spec.Domain.Firmware)
	}
	if want := []string{kubevirtv1.VirtualMachineControllerFinalizer}; !slices.Equal(vmi.Finalizers, want) {
		t.Errorf("finalizers after create: %v, want %v", vmi.Finalizers, want)
	}
	// An instance of a VM carries it already: not twice.
	main.PrepareForCreate(context.Background(), vmi)
	if len(vmi.Finalizers) != 1 {
		t.Errorf("finalizers after a second create: %v", vmi.Finalizers)
	}
	old := vmi.DeepCopy()
	upd := vmi.DeepCopy()
	upd.Spec.Hostname = "changed"
	upd.Status.Phase = kubevirtv1.Scheduling
	status.PrepareForUpdate(context.Background(), upd, old)
	if upd.Spec.Hostname != "" || upd.Status.Phase != kubevirtv1.Scheduling {
		t.Errorf("status update: spec.hostname=%q phase=%q, want spec kept and phase Scheduling", upd.Spec.Hostname, upd.Status.Phase)
	}
	// The server mirrors status.nodeName into the kubevirt.io/nodeName label; other label changes
	// through /status are dropped.
	old = upd.DeepCopy()
	upd = old.DeepCopy()
	upd.Labels = map[string]string{"through": "status"}
	upd.Status.NodeName = "node-b"
	status.PrepareForUpdate(context.Background(), upd, old)
	if diff := cmp.Diff(map[string]string{kubevirtv1.NodeNameLabel: "node-b"}, upd.Labels); diff != "" {
		t.Errorf("labels after a status update (-want +got):\n%s", diff)
	}
	if old.Labels != nil {
		t.Errorf("the old object's labels were modified: %v", old.Labels)
	}
}

func TestTable(t *testing.T) {
	table, err := Table().ConvertToTable(context.Background(), running(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interface{}{"vmi1", "0s", "Running", "10.88.0.9", "node-a", "True"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	empty := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "new"}}
	table, err = Table().ConvertToTable(context.Background(), empty, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interface{}{"new", "<unknown>", "", "", "", "False"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells of a fresh instance (-want +got):\n%s", diff)
	}
}

func TestStatusLabelsMirrorMigrationTarget(t *testing.T) {
	_, status := store.NewStrategies(nil, Rules)
	inFlight := &kubevirtv1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", SourceNode: "node-a", TargetNode: "node-b"}
	completed := inFlight.DeepCopy()
	completed.Completed = true
	noTarget := &kubevirtv1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", SourceNode: "node-a"}
	tests := []struct {
		name       string
		oldLabels  map[string]string
		state      *kubevirtv1.VirtualMachineInstanceMigrationState
		nodeName   string
		wantLabels map[string]string
	}{
		{name: "no migration", oldLabels: map[string]string{"app": "x"}, nodeName: "node-a",
			wantLabels: map[string]string{"app": "x", kubevirtv1.NodeNameLabel: "node-a"}},
		{name: "migration in flight", oldLabels: map[string]string{"app": "x", kubevirtv1.NodeNameLabel: "node-a"}, nodeName: "node-a", state: inFlight,
			wantLabels: map[string]string{"app": "x", kubevirtv1.NodeNameLabel: "node-a", kubevirtv1.MigrationTargetNodeNameLabel: "node-b"}},
		{name: "no target yet", oldLabels: map[string]string{kubevirtv1.NodeNameLabel: "node-a"}, nodeName: "node-a", state: noTarget,
			wantLabels: map[string]string{kubevirtv1.NodeNameLabel: "node-a"}},
		{name: "completed: label removed", nodeName: "node-a", state: completed,
			oldLabels:  map[string]string{kubevirtv1.NodeNameLabel: "node-a", kubevirtv1.MigrationTargetNodeNameLabel: "node-b"},
			wantLabels: map[string]string{kubevirtv1.NodeNameLabel: "node-a"}},
		{name: "handover: node label moves, target label removed", nodeName: "node-b", state: completed,
			oldLabels:  map[string]string{kubevirtv1.NodeNameLabel: "node-a", kubevirtv1.MigrationTargetNodeNameLabel: "node-b"},
			wantLabels: map[string]string{kubevirtv1.NodeNameLabel: "node-b"}},
		{name: "migration state cleared: label removed", nodeName: "node-a",
			oldLabels:  map[string]string{kubevirtv1.NodeNameLabel: "node-a", kubevirtv1.MigrationTargetNodeNameLabel: "node-b"},
			wantLabels: map[string]string{kubevirtv1.NodeNameLabel: "node-a"}},
		{name: "a stale target label follows the state", nodeName: "node-a", state: inFlight,
			oldLabels:  map[string]string{kubevirtv1.NodeNameLabel: "node-a", kubevirtv1.MigrationTargetNodeNameLabel: "node-c"},
			wantLabels: map[string]string{kubevirtv1.NodeNameLabel: "node-a", kubevirtv1.MigrationTargetNodeNameLabel: "node-b"}},
		{name: "no labels at all", wantLabels: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := running()
			old.Labels = tc.oldLabels
			oldCopy := old.DeepCopy()
			upd := old.DeepCopy()
			upd.Labels = map[string]string{"sneaked": "in"} // label writes through /status are dropped
			upd.Status.NodeName = tc.nodeName
			upd.Status.MigrationState = tc.state.DeepCopy()
			status.PrepareForUpdate(context.Background(), upd, old)
			if diff := cmp.Diff(tc.wantLabels, upd.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(oldCopy.Labels, old.Labels); diff != "" {
				t.Errorf("the stored object's labels were modified (-before +after):\n%s", diff)
			}
		})
	}
}
