package store

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
)

// REST is a resource's main endpoint: the generic store plus the discovery hints kubectl uses
// (short names such as `vm`, and categories such as `all` for `kubectl get all`).
type REST struct {
	*genericregistry.Store
	shortNames []string
	categories []string
}

var (
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.CategoriesProvider   = &REST{}
	_ rest.StandardStorage      = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST wraps a store with its short names, in the category `all` as every kubevirt.io
// resource is.
func NewREST(s *genericregistry.Store, shortNames ...string) *REST {
	return NewRESTInCategories(s, []string{"all"}, shortNames...)
}

// NewRESTInCategories wraps a store with its categories (none: nil) and short names.
func NewRESTInCategories(s *genericregistry.Store, categories []string, shortNames ...string) *REST {
	return &REST{Store: s, shortNames: shortNames, categories: categories}
}

// ShortNames lists the abbreviations kubectl accepts for the resource.
func (r *REST) ShortNames() []string { return r.shortNames }

// Categories lists the groups of resources (`kubectl get <category>`) the resource belongs to.
func (r *REST) Categories() []string { return r.categories }

// Get reads one object. A missing object's error names this store's resource: the generic
// store takes the resource it names from the request, and a store read on behalf of another
// resource's request (the cluster instance type a VM names, the instance of a VM's console)
// would otherwise report the requested resource missing (`virtualmachines.kubevirt.io "clarge"
// not found` for a missing cluster instance type).
func (r *REST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.Store.Get(ctx, name, options)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(r.Store.DefaultQualifiedResource, name)
	}
	return obj, err
}

// Update updates one object; an updated object's resourceVersion must parse (checkedVersion).
func (r *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo,
	createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc,
	forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	objInfo = checkedVersion{UpdatedObjectInfo: objInfo, resource: r.Store.DefaultQualifiedResource, name: name}
	return r.Store.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}
