package store

import (
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
)

// REST is a resource's main endpoint: the generic store plus the discovery hints kubectl uses
// (short names such as `vm`, and the `all` category for `kubectl get all`).
type REST struct {
	*genericregistry.Store
	shortNames []string
}

var (
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.CategoriesProvider   = &REST{}
	_ rest.StandardStorage      = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST wraps a store with its short names.
func NewREST(s *genericregistry.Store, shortNames ...string) *REST {
	return &REST{Store: s, shortNames: shortNames}
}

// ShortNames lists the abbreviations kubectl accepts for the resource.
func (r *REST) ShortNames() []string { return r.shortNames }

// Categories puts every NativeVirt resource into `kubectl get all`.
func (r *REST) Categories() []string { return []string{"all"} }
