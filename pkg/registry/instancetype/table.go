package instancetype

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// table lays out `kubectl get` for every kind as for KubeVirt's CRDs, which define no printer
// columns: NAME and AGE.
func table[T interface {
	runtime.Object
	GetCreationTimestamp() metav1.Time
}]() store.Table[T] {
	return store.Table[T]{
		Columns: []metav1.TableColumnDefinition{store.AgeColumn},
		Cells:   func(obj T) []interface{} { return []interface{}{store.Age(obj.GetCreationTimestamp())} },
	}
}
