package virtualmachineinstancemigration

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestSelectableFieldsAndTable(t *testing.T) {
	m := &kubevirtv1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", CreationTimestamp: metav1.Now()},
		Spec:       kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: "vmi1"},
		Status:     kubevirtv1.VirtualMachineInstanceMigrationStatus{Phase: kubevirtv1.MigrationRunning},
	}
	_, got, err := GetAttrs(m)
	if err != nil {
		t.Fatal(err)
	}
	want := fields.Set{"metadata.name": "m", "metadata.namespace": "ns", "spec.vmiName": "vmi1", "status.phase": "Running"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("selectable fields (-want +got):\n%s", diff)
	}
	table, err := Table().ConvertToTable(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interface{}{"m", "Running", "vmi1", "0s"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
