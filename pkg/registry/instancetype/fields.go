package instancetype

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// getAttrs returns the labels and selectable fields of an object of any of the four kinds:
// metadata.name, and metadata.namespace for the namespaced kinds (install.FieldLabels).
func getAttrs(namespaced bool) func(obj runtime.Object) (labels.Set, fields.Set, error) {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil, fmt.Errorf("not an instance type or preference: %T: %w", obj, err)
		}
		fieldSet := fields.Set{"metadata.name": m.GetName()}
		if namespaced {
			fieldSet["metadata.namespace"] = m.GetNamespace()
		}
		return m.GetLabels(), fieldSet, nil
	}
}
