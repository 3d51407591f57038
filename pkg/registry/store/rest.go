package store

import (
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
