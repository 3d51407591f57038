package virtualmachineinstancereplicaset

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Storage holds the REST endpoints of virtualmachineinstancereplicasets.
type Storage struct {
	ReplicaSet *store.REST
	Status     *store.StatusREST
	Scale      *ScaleREST
}

// NewStorage builds the virtualmachineinstancereplicasets store on the given storage backend.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	main, status := store.NewStrategies(scheme, Rules)
	s, statusREST, err := store.New(store.Resource{
		Plural:           kubevirtv1.Resource("virtualmachineinstancereplicasets"),
		Singular:         kubevirtv1.Resource("virtualmachineinstancereplicaset"),
		NewFunc:          func() runtime.Object { return &kubevirtv1.VirtualMachineInstanceReplicaSet{} },
		NewListFunc:      func() runtime.Object { return &kubevirtv1.VirtualMachineInstanceReplicaSetList{} },
		SelectableFields: GetAttrs,
		Strategy:         main,
		StatusStrategy:   status,
		Table:            Table(),
	}, optsGetter)
	if err != nil {
		return nil, err
	}
	return &Storage{
		ReplicaSet: store.NewREST(s, "vmirs", "vmirss"),
		Status:     statusREST,
		Scale:      &ScaleREST{store: s},
	}, nil
}
