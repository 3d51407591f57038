package instancetype

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Short names and categories, as KubeVirt's CRDs declare them (virt-operator's crds.go). Only the
// namespaced kinds are in `all`; the cluster-wide preference has no long short name.
var (
	instancetypeShortNames        = []string{"vminstancetype", "vminstancetypes", "vmf", "vmfs"}
	clusterInstancetypeShortNames = []string{"vmclusterinstancetype", "vmclusterinstancetypes", "vmcf", "vmcfs"}
	preferenceShortNames          = []string{"vmpref", "vmprefs", "vmp", "vmps"}
	clusterPreferenceShortNames   = []string{"vmcp", "vmcps"}
	namespacedCategories          = []string{"all"}
)

// NewStorage builds the stores of the four resources, keyed by their plural names.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	kinds := []struct {
		plural     string
		singular   string
		scope      store.Scope
		newObj     func() runtime.Object
		newList    func() runtime.Object
		strategy   store.Strategy
		table      rest.TableConvertor
		shortNames []string
	}{
		{v1beta1.PluralResourceName, v1beta1.SingularResourceName, store.Namespaced,
			func() runtime.Object { return &v1beta1.VirtualMachineInstancetype{} },
			func() runtime.Object { return &v1beta1.VirtualMachineInstancetypeList{} },
			store.NewStrategy(scheme, store.Namespaced, InstancetypeRules),
			table[*v1beta1.VirtualMachineInstancetype](), instancetypeShortNames},
		{v1beta1.ClusterPluralResourceName, v1beta1.ClusterSingularResourceName, store.ClusterScoped,
			func() runtime.Object { return &v1beta1.VirtualMachineClusterInstancetype{} },
			func() runtime.Object { return &v1beta1.VirtualMachineClusterInstancetypeList{} },
			store.NewStrategy(scheme, store.ClusterScoped, ClusterInstancetypeRules),
			table[*v1beta1.VirtualMachineClusterInstancetype](), clusterInstancetypeShortNames},
		{v1beta1.PluralPreferenceResourceName, v1beta1.SingularPreferenceResourceName, store.Namespaced,
			func() runtime.Object { return &v1beta1.VirtualMachinePreference{} },
			func() runtime.Object { return &v1beta1.VirtualMachinePreferenceList{} },
			store.NewStrategy(scheme, store.Namespaced, PreferenceRules),
			table[*v1beta1.VirtualMachinePreference](), preferenceShortNames},
		{v1beta1.ClusterPluralPreferenceResourceName, v1beta1.ClusterSingularPreferenceResourceName, store.ClusterScoped,
			func() runtime.Object { return &v1beta1.VirtualMachineClusterPreference{} },
			func() runtime.Object { return &v1beta1.VirtualMachineClusterPreferenceList{} },
			store.NewStrategy(scheme, store.ClusterScoped, ClusterPreferenceRules),
			table[*v1beta1.VirtualMachineClusterPreference](), clusterPreferenceShortNames},
	}
	storage := make(map[string]rest.Storage, len(kinds))
	for _, k := range kinds {
		s, _, err := store.New(store.Resource{
			Plural:           v1beta1.Resource(k.plural),
			Singular:         v1beta1.Resource(k.singular),
			NewFunc:          k.newObj,
			NewListFunc:      k.newList,
			SelectableFields: getAttrs(bool(k.scope)),
			Strategy:         k.strategy,
			Table:            k.table,
		}, optsGetter)
		if err != nil {
			return nil, err
		}
		var categories []string
		if k.scope == store.Namespaced {
			categories = namespacedCategories
		}
		storage[k.plural] = store.NewRESTInCategories(s, categories, k.shortNames...)
	}
	return storage, nil
}
