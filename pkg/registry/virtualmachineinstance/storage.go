package virtualmachineinstance

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Storage holds the REST endpoints of virtualmachineinstances.
type Storage struct {
	VirtualMachineInstance *store.REST
	Status                 *store.StatusREST
}

// NewStorage builds the virtualmachineinstances store on the given storage backend.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	main, status := store.NewStrategies(scheme, Rules)
	s, statusREST, err := store.New(store.Resource{
		Plural:           kubevirtv1.Resource("virtualmachineinstances"),
		Singular:         kubevirtv1.Resource("virtualmachineinstance"),
		NewFunc:          func() runtime.Object { return &kubevirtv1.VirtualMachineInstance{} },
		NewListFunc:      func() runtime.Object { return &kubevirtv1.VirtualMachineInstanceList{} },
		SelectableFields: GetAttrs,
		Strategy:         main,
		StatusStrategy:   status,
		Table:            Table(),
	}, optsGetter)
	if err != nil {
		return nil, err
	}
	return &Storage{VirtualMachineInstance: store.NewREST(s, "vmi", "vmis"), Status: statusREST}, nil
}
