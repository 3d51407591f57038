package virtualmachine

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/instancetype/revision"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Storage holds the REST endpoints of virtualmachines.
type Storage struct {
	VirtualMachine *REST
	Status         *store.StatusREST
}

// NewStorage builds the virtualmachines store on the given storage backend. instancetypes reads
// the instance types and preferences VMs name, for their admission (nil skips that check);
// claims reads the claims matchers infer them from (nil: no inference).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, instancetypes *revision.Getters, claims ClaimGetter) (*Storage, error) {
	main, status := store.NewStrategies(scheme, Rules)
	s, statusREST, err := store.New(store.Resource{
		Plural:           kubevirtv1.Resource("virtualmachines"),
		Singular:         kubevirtv1.Resource("virtualmachine"),
		NewFunc:          func() runtime.Object { return &kubevirtv1.VirtualMachine{} },
		NewListFunc:      func() runtime.Object { return &kubevirtv1.VirtualMachineList{} },
		SelectableFields: GetAttrs,
		Strategy:         main,
		StatusStrategy:   status,
		Table:            Table(),
	}, optsGetter)
	if err != nil {
		return nil, err
	}
	return &Storage{VirtualMachine: &REST{REST: store.NewREST(s, "vm", "vms"), instancetypes: instancetypes, claims: claims}, Status: statusREST}, nil
}
