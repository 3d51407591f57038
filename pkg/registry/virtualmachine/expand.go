package virtualmachine

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/validation"
	"github.com/nativevirt/nativevirt/pkg/instancetype"
	"github.com/nativevirt/nativevirt/pkg/instancetype/revision"
	"github.com/nativevirt/nativevirt/pkg/registry/subresource"
)

// Expand returns vm as `virtctl expand` shows it: its template completed by the instance type and
// preference it names (from the revisions its status records, else the objects), without the
// matchers. A VM that names neither comes back as it is. A missing object or a conflict is a 422
// naming the field, as at admission.
func Expand(ctx context.Context, g revision.Getters, vm *kubevirtv1.VirtualMachine) (*kubevirtv1.VirtualMachine, error) {
	out := vm.DeepCopy()
	if out.Spec.Instancetype == nil && out.Spec.Preference == nil {
		return out, nil
	}
	invalid := func(errs field.ErrorList) error {
		return apierrors.NewInvalid(kubevirtv1.Kind("VirtualMachine"), vm.Name, errs)
	}
	if errs := validation.ValidateVirtualMachine(out); len(errs) > 0 {
		return nil, invalid(errs)
	}
	if out.Spec.Template == nil {
		return out, nil
	}
	tmpl, pref, errs, err := expandTemplate(ctx, g, out)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	out.Spec.Template = tmpl
	instancetype.ApplyVolumePreferences(pref, out.Spec.DataVolumeTemplates)
	out.Spec.Instancetype = nil
	out.Spec.Preference = nil
	return out, nil
}

// ExpandSpecHandler serves GET virtualmachines/{name}/expand-spec: the stored VM, expanded.
func ExpandSpecHandler(vms rest.Getter, g revision.Getters) subresource.Handler {
	return subresource.HandlerFunc(func(w http.ResponseWriter, r *http.Request, namespace, name string) {
		if !subresource.RequireMethod(w, r, http.MethodGet) {
			return
		}
		ctx := genericapirequest.WithNamespace(r.Context(), namespace)
		obj, err := vms.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			subresource.WriteError(w, err)
			return
		}
		vm, ok := obj.(*kubevirtv1.VirtualMachine)
		if !ok {
			subresource.WriteError(w, apierrors.NewInternalError(errors.New("the VM store returned another kind")))
			return
		}
		writeExpanded(w, r, g, vm)
	})
}

// ExpandVMSpecHandler serves PUT expand-vm-spec: the VM of the request body (in the request's
// namespace; not stored), expanded.
func ExpandVMSpecHandler(g revision.Getters) func(w http.ResponseWriter, r *http.Request, namespace string) {
	return func(w http.ResponseWriter, r *http.Request, namespace string) {
		if !subresource.RequireMethod(w, r, http.MethodPut) {
			return
		}
		vm := &kubevirtv1.VirtualMachine{}
		if err := subresource.DecodeObject(r, vm); err != nil {
			subresource.WriteError(w, err)
			return
		}
		switch vm.Namespace {
		case "":
			vm.Namespace = namespace
		case namespace:
		default:
			subresource.WriteError(w, apierrors.NewBadRequest("the VirtualMachine's namespace "+vm.Namespace+
				" is not the request's namespace "+namespace))
			return
		}
		// As if it were created: the matchers' default kinds, the instance's defaults unless a
		// preference fills them.
		kubevirtv1.SetObjectDefaults_VirtualMachine(vm)
		defaultMatcherKinds(vm)
		writeExpanded(w, r, g, vm)
	}
}

func writeExpanded(w http.ResponseWriter, r *http.Request, g revision.Getters, vm *kubevirtv1.VirtualMachine) {
	ctx := genericapirequest.WithNamespace(r.Context(), vm.Namespace)
	expanded, err := Expand(ctx, g, vm)
	if err != nil {
		subresource.WriteError(w, err)
		return
	}
	expanded.APIVersion, expanded.Kind = kubevirtv1.SchemeGroupVersion.String(), "VirtualMachine"
	subresource.WriteObject(w, expanded)
}
