package cdi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// DataVolumeTable lays out `kubectl get dv` as CDI's printer columns do: NAME, PHASE, PROGRESS,
// RESTARTS, AGE.
func DataVolumeTable() store.Table[*v1beta1.DataVolume] {
	return store.Table[*v1beta1.DataVolume]{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Phase", Type: "string", Description: "The phase the data volume is in (status.phase)."},
			{Name: "Progress", Type: "string", Description: "Transfer progress in percentage if known, N/A otherwise (status.progress)."},
			{Name: "Restarts", Type: "integer", Description: "The number of times the transfer has been restarted (status.restartCount)."},
			store.AgeColumn,
		},
		Cells: func(dv *v1beta1.DataVolume) []interface{} {
			return []interface{}{string(dv.Status.Phase), string(dv.Status.Progress), int64(dv.Status.RestartCount), store.Age(dv.CreationTimestamp)}
		},
	}
}

// table lays out `kubectl get` for the kinds CDI's CRDs give no printer columns: NAME and AGE.
func table[T interface {
	runtime.Object
	GetCreationTimestamp() metav1.Time
}]() store.Table[T] {
	return store.Table[T]{
		Columns: []metav1.TableColumnDefinition{store.AgeColumn},
		Cells:   func(obj T) []interface{} { return []interface{}{store.Age(obj.GetCreationTimestamp())} },
	}
}
