package virtualmachine

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/cdi"
)

// AuthorizeClonesWith makes the endpoint check, as KubeVirt's VM admission does, that the user
// creating or changing a VM may clone what its dataVolumeTemplates clone (create on
// datavolumes/source in the source's namespace). The VM controller, which creates the
// DataVolumes later, may clone anything; without this check a VM would let any user copy
// another namespace's disks.
func (s *Storage) AuthorizeClonesWith(authz authorizer.Authorizer) {
	s.VirtualMachine.authz = authz
}

// authorizeClones checks the templates of vm that clone; on an update, templates equal to one of
// the old VM were authorized before and are not checked again.
func (r *REST) authorizeClones(ctx context.Context, obj, old runtime.Object) error {
	vm, ok := obj.(*kubevirtv1.VirtualMachine)
	if !ok || r.authz == nil {
		return nil
	}
	oldVM, _ := old.(*kubevirtv1.VirtualMachine)
	for i := range vm.Spec.DataVolumeTemplates {
		t := &vm.Spec.DataVolumeTemplates[i]
		if oldVM != nil && hasTemplate(oldVM, t) {
			continue
		}
		if err := cdi.AuthorizeCloneSpec(ctx, r.authz, t.Name, &t.Spec); err != nil {
			return err
		}
	}
	return nil
}

func hasTemplate(vm *kubevirtv1.VirtualMachine, t *kubevirtv1.DataVolumeTemplateSpec) bool {
	for i := range vm.Spec.DataVolumeTemplates {
		o := &vm.Spec.DataVolumeTemplates[i]
		if o.Name == t.Name && apiequality.Semantic.DeepEqual(o.Spec, t.Spec) {
			return true
		}
	}
	return false
}
