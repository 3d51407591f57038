package store

import (
	"context"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
)

// checkedVersion refuses an updated object whose metadata.resourceVersion is not a version
// (empty or a decimal number) with a 422 naming the field. The generic store parses it before
// any validation runs and answers a 500 with strconv's error.
type checkedVersion struct {
	rest.UpdatedObjectInfo
	resource schema.GroupResource
	name     string
}

// UpdatedObject is the wrapped object, once its resourceVersion parses.
func (c checkedVersion) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	obj, err := c.UpdatedObjectInfo.UpdatedObject(ctx, old)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil // not an object with metadata: the store reports that itself
	}
	if rv := m.GetResourceVersion(); rv != "" {
		if _, perr := strconv.ParseUint(rv, 10, 64); perr != nil {
			kind := schema.GroupKind{Group: c.resource.Group, Kind: c.resource.Resource}
			if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
				kind = gvk.GroupKind()
			}
			return nil, apierrors.NewInvalid(kind, c.name, field.ErrorList{field.Invalid(
				field.NewPath("metadata", "resourceVersion"), rv, "must be empty or a resourceVersion read from the server")})
		}
	}
	return obj, nil
}
