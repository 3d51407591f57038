package cdi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// getAttrs returns the labels and selectable fields of an object of any of the four kinds:
// metadata.name, metadata.namespace for the namespaced kinds, and a DataVolume's status.phase
// (install.FieldLabels).
func getAttrs(namespaced bool) func(obj runtime.Object) (labels.Set, fields.Set, error) {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		if dv, ok := obj.(*v1beta1.DataVolume); ok {
			return dv.Labels, DataVolumeSelectableFields(dv), nil
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil, fmt.Errorf("not a cdi.kubevirt.io object: %T: %w", obj, err)
		}
		fieldSet := fields.Set{"metadata.name": m.GetName()}
		if namespaced {
			fieldSet["metadata.namespace"] = m.GetNamespace()
		}
		return m.GetLabels(), fieldSet, nil
	}
}

// DataVolumeSelectableFields are the fields a field selector on DataVolumes may name.
func DataVolumeSelectableFields(dv *v1beta1.DataVolume) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"status.phase": string(dv.Status.Phase)}, &dv.ObjectMeta, true)
}
