package virtualmachineinstancemigration

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Storage holds the REST endpoints of virtualmachineinstancemigrations.
type Storage struct {
	Migration *store.REST
	Status    *store.StatusREST
}

// NewStorage builds the virtualmachineinstancemigrations store on the given storage backend.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	main, status := store.NewStrategies(scheme, Rules)
	s, statusREST, err := store.New(store.Resource{
		Plural:           kubevirtv1.Resource("virtualmachineinstancemigrations"),
		Singular:         kubevirtv1.Resource("virtualmachineinstancemigration"),
		NewFunc:          func() runtime.Object { return &kubevirtv1.VirtualMachineInstanceMigration{} },
		NewListFunc:      func() runtime.Object { return &kubevirtv1.VirtualMachineInstanceMigrationList{} },
		SelectableFields: GetAttrs,
		Strategy:         main,
		StatusStrategy:   status,
		Table:            Table(),
	}, optsGetter)
	if err != nil {
		return nil, err
	}
	return &Storage{Migration: store.NewREST(s, "vmim", "vmims"), Status: statusREST}, nil
}
