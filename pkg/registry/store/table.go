package store

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Table converts objects of type T into `kubectl get` rows. Columns lists every column after NAME;
// Cells returns the cells for those columns (age is computed by the helper Age).
type Table[T runtime.Object] struct {
	Columns []metav1.TableColumnDefinition
	Cells   func(obj T) []interface{}
}

var _ rest.TableConvertor = Table[runtime.Object]{}

// NameColumn is the first column of every NativeVirt table.
var NameColumn = metav1.TableColumnDefinition{
	Name: "Name", Type: "string", Format: "name",
	Description: "Name must be unique within a namespace; it identifies the object.",
}

// AgeColumn shows how long ago the object was created.
var AgeColumn = metav1.TableColumnDefinition{
	Name: "Age", Type: "string",
	Description: "Time since the object was created (metadata.creationTimestamp).",
}

// ConvertToTable turns one object or a list into a table.
func (t Table[T]) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: append([]metav1.TableColumnDefinition{NameColumn}, t.Columns...)}
	if m, err := meta.ListAccessor(object); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
		table.Continue = m.GetContinue()
		table.RemainingItemCount = m.GetRemainingItemCount()
	} else if m, err := meta.CommonAccessor(object); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	var convErr error
	rows, err := metatable.MetaToTableRow(object, func(obj runtime.Object, _ metav1.Object, name, _ string) ([]interface{}, error) {
		typed, ok := obj.(T)
		if !ok {
			convErr = fmt.Errorf("unexpected object type %T in table conversion", obj)
			return nil, convErr
		}
		return append([]interface{}{name}, t.Cells(typed)...), nil
	})
	if err != nil {
		return nil, err
	}
	table.Rows = rows
	return table, nil
}

// Age renders the time since ts the way kubectl does ("<unknown>" when unset).
func Age(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(ts.Time))
}
