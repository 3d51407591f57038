package virtualmachineinstancemigration

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Storage holds the REST endpoints of virtualmachineinstancemigrations.
type Storage struct {
	Migration *store.REST
	Status    *store.StatusREST
}

// NewStorage builds the virtualmachineinstancemigrations store on the given storage backend.
// instances reads VirtualMachineInstances: a migration is refused at creation when its instance
// cannot be migrated.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, instances rest.Getter) (*Storage, error) {
	plain, status := store.NewStrategies(scheme, Rules)
	check := &sourceCheck{instances: instances}
	main := checkedStrategy{Strategy: plain, check: check}
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
	check.migrations = s
	return &Storage{Migration: store.NewREST(s, "vmim", "vmims"), Status: statusREST}, nil
}
