package store

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestTableRowsCarryMetadataWithoutManagedFields(t *testing.T) {
	table := Table[*metav1.PartialObjectMetadata]{Cells: func(*metav1.PartialObjectMetadata) []interface{} { return nil }}
	obj := func() *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: "vm1", Labels: map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}},
		}}
	}
	for _, c := range []struct {
		name    string
		opts    runtime.Object
		managed bool
	}{
		{"no options", nil, false},
		{"default", &metav1.TableOptions{}, false},
		{"Metadata", &metav1.TableOptions{IncludeObject: metav1.IncludeMetadata}, false},
		{"Object", &metav1.TableOptions{IncludeObject: metav1.IncludeObject}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := obj()
			got, err := table.ConvertToTable(context.Background(), in, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			m, ok := got.Rows[0].Object.Object.(metav1.Object)
			if !ok {
				t.Fatalf("row object %T has no metadata", got.Rows[0].Object.Object)
			}
			if m.GetName() != "vm1" || m.GetLabels()["a"] != "b" {
				t.Errorf("row metadata lost name or labels: %v %v", m.GetName(), m.GetLabels())
			}
			if has := len(m.GetManagedFields()) > 0; has != c.managed {
				t.Errorf("row has managedFields %v, want %v", has, c.managed)
			}
			if len(in.ManagedFields) != 1 {
				t.Error("the stored object's managedFields were changed")
			}
		})
	}
}
