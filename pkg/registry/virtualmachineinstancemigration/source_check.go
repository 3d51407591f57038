package virtualmachineinstancemigration

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/validation"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// sourceCheck refuses, at creation, a migration of an instance that cannot be migrated (see
// validation.ValidateVirtualMachineInstanceMigrationSource): what KubeVirt's admission webhook
// does, done here in the strategy, with the instance and the other migrations read from the
// server's own stores. Two migrations of one instance created at the same moment may both pass;
// the migration controller then fails the later one.
type sourceCheck struct {
	instances  rest.Getter
	migrations rest.Lister
}

// checkedStrategy is the main strategy with the source check after the object's own validation.
type checkedStrategy struct {
	store.Strategy
	check *sourceCheck
}

func (s checkedStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	errs := s.Strategy.Validate(ctx, obj)
	m, ok := obj.(*kubevirtv1.VirtualMachineInstanceMigration)
	if len(errs) > 0 || !ok {
		return errs
	}
	return s.check.validate(ctx, m)
}

func (c *sourceCheck) validate(ctx context.Context, m *kubevirtv1.VirtualMachineInstanceMigration) field.ErrorList {
	path := field.NewPath("spec", "vmiName")
	var vmi *kubevirtv1.VirtualMachineInstance
	obj, err := c.instances.Get(ctx, m.Spec.VMIName, &metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return field.ErrorList{field.InternalError(path, fmt.Errorf("reading the VMI: %w", err))}
	default:
		var ok bool
		if vmi, ok = obj.(*kubevirtv1.VirtualMachineInstance); !ok {
			return field.ErrorList{field.InternalError(path, fmt.Errorf("the VMI store returned %T", obj))}
		}
	}
	if vmi == nil || c.migrations == nil {
		return validation.ValidateVirtualMachineInstanceMigrationSource(m, vmi, nil)
	}
	listed, err := c.migrations.List(ctx, &metainternalversion.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.vmiName", m.Spec.VMIName)})
	if err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("listing the VMI's migrations: %w", err))}
	}
	list, ok := listed.(*kubevirtv1.VirtualMachineInstanceMigrationList)
	if !ok {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("the migration store returned %T", listed))}
	}
	others := make([]*kubevirtv1.VirtualMachineInstanceMigration, 0, len(list.Items))
	for i := range list.Items {
		others = append(others, &list.Items[i])
	}
	return validation.ValidateVirtualMachineInstanceMigrationSource(m, vmi, others)
}
