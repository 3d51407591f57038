package cdi

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Short names and categories, as CDI's CRDs declare them.
var (
	dataVolumeShortNames = []string{"dv", "dvs"}
	dataSourceShortNames = []string{"das"}
	namespacedCategories = []string{"all"}
)

// versions are the served versions server-side apply's reset fields are keyed by.
var versions = []fieldpath.APIVersion{fieldpath.APIVersion(v1beta1.SchemeGroupVersion.String())}

// NewStorage builds the stores of the four resources and their /status, keyed by path
// ("datavolumes", "datavolumes/status", ...). authz decides CDI's clone authorization when a
// DataVolume that clones is created (nil: not checked, for tests of the stores alone).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer) (map[string]rest.Storage, error) {
	type kind struct {
		plural, singular string
		scope            store.Scope
		newObj, newList  func() runtime.Object
		strategies       func() (store.Strategy, store.StatusStrategy)
		table            rest.TableConvertor
		shortNames       []string
	}
	kinds := []kind{
		{plural: "datavolumes", singular: "datavolume", scope: store.Namespaced,
			newObj:  func() runtime.Object { return &v1beta1.DataVolume{} },
			newList: func() runtime.Object { return &v1beta1.DataVolumeList{} },
			table:   DataVolumeTable(), shortNames: dataVolumeShortNames,
			strategies: strategies(scheme, store.Namespaced, DataVolumeRules)},
		{plural: "datasources", singular: "datasource", scope: store.Namespaced,
			newObj:  func() runtime.Object { return &v1beta1.DataSource{} },
			newList: func() runtime.Object { return &v1beta1.DataSourceList{} },
			table:   table[*v1beta1.DataSource](), shortNames: dataSourceShortNames,
			strategies: strategies(scheme, store.Namespaced, DataSourceRules)},
		{plural: "storageprofiles", singular: "storageprofile", scope: store.ClusterScoped,
			newObj:     func() runtime.Object { return &v1beta1.StorageProfile{} },
			newList:    func() runtime.Object { return &v1beta1.StorageProfileList{} },
			table:      table[*v1beta1.StorageProfile](),
			strategies: strategies(scheme, store.ClusterScoped, StorageProfileRules)},
		{plural: "cdiconfigs", singular: "cdiconfig", scope: store.ClusterScoped,
			newObj:     func() runtime.Object { return &v1beta1.CDIConfig{} },
			newList:    func() runtime.Object { return &v1beta1.CDIConfigList{} },
			table:      table[*v1beta1.CDIConfig](),
			strategies: strategies(scheme, store.ClusterScoped, CDIConfigRules)},
	}
	storage := make(map[string]rest.Storage, 2*len(kinds))
	for _, k := range kinds {
		main, statusStrategy := k.strategies()
		s, status, err := store.New(store.Resource{
			Plural:           v1beta1.Resource(k.plural),
			Singular:         v1beta1.Resource(k.singular),
			NewFunc:          k.newObj,
			NewListFunc:      k.newList,
			SelectableFields: getAttrs(bool(k.scope)),
			Strategy:         main,
			StatusStrategy:   statusStrategy,
			Table:            k.table,
		}, optsGetter)
		if err != nil {
			return nil, err
		}
		var categories []string
		if k.scope == store.Namespaced {
			categories = namespacedCategories
		}
		endpoint := store.NewRESTInCategories(s, categories, k.shortNames...)
		storage[k.plural] = endpoint
		if k.plural == "datavolumes" {
			storage[k.plural] = &dataVolumeREST{REST: endpoint, authz: authz}
		}
		storage[k.plural+"/status"] = status
	}
	return storage, nil
}

// strategies defers building a kind's strategies to NewStorage's loop.
func strategies[T runtime.Object](scheme *runtime.Scheme, scope store.Scope, rules store.Rules[T]) func() (store.Strategy, store.StatusStrategy) {
	return func() (store.Strategy, store.StatusStrategy) {
		return store.NewGroupStrategies(scheme, scope, versions, rules)
	}
}
