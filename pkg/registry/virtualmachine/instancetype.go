package virtualmachine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/rest"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/validation"
	"github.com/nativevirt/nativevirt/pkg/instancetype"
	"github.com/nativevirt/nativevirt/pkg/instancetype/revision"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// REST is the virtualmachines endpoint: the store, plus the check KubeVirt's admission webhook
// makes of a VM that names an instance type or preference. That check needs other objects, so
// it cannot live in the strategy's pure validation; it runs as part of the request's validation,
// after the strategy's (defaults applied, the VM itself valid).
type REST struct {
	*store.REST
	// instancetypes reads what the matchers name; nil skips the check.
	instancetypes *revision.Getters
	// claims reads the claims that matchers infer from; nil: no inference (standalone), and
	// validation refuses a matcher that asks for it.
	claims ClaimGetter
	// authz decides the clone authorization of dataVolumeTemplates; nil skips it.
	authz authorizer.Authorizer
}

var _ rest.StandardStorage = &REST{}

// Create checks the instance type and preference of a new VM as part of its validation.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc,
	opts *metav1.CreateOptions) (runtime.Object, error) {
	if err := r.infer(ctx, obj); err != nil {
		return nil, err
	}
	return r.REST.Create(ctx, obj, r.checkCreate(createValidation), opts)
}

// Update checks them when the VM's matchers or template change.
func (r *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.REST.Update(ctx, name, inferringUpdate{UpdatedObjectInfo: objInfo, infer: r.infer},
		r.checkCreate(createValidation), r.checkUpdate(updateValidation), forceAllowCreate, opts)
}

// inferringUpdate infers the matchers of the updated object before the strategy sees it.
type inferringUpdate struct {
	rest.UpdatedObjectInfo
	infer func(ctx context.Context, obj runtime.Object) error
}

func (u inferringUpdate) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	obj, err := u.UpdatedObjectInfo.UpdatedObject(ctx, old)
	if err != nil {
		return nil, err
	}
	return obj, u.infer(ctx, obj)
}

// infer resolves the matchers that say inferFromVolume (KubeVirt's mutation of a VM): a 422
// naming the field when the volume names nothing and the policy is Reject.
func (r *REST) infer(ctx context.Context, obj runtime.Object) error {
	vm, ok := obj.(*kubevirtv1.VirtualMachine)
	if !ok || r.claims == nil {
		return nil
	}
	errs, err := inferMatchers(ctx, r.claims, vm)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(kubevirtv1.Kind("VirtualMachine"), vm.Name, errs)
	}
	return nil
}

func (r *REST) checkCreate(next rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	return func(ctx context.Context, obj runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj); err != nil {
				return err
			}
		}
		if err := r.check(ctx, obj); err != nil {
			return err
		}
		return r.authorizeClones(ctx, obj, nil)
	}
}

func (r *REST) checkUpdate(next rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	return func(ctx context.Context, obj, old runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj, old); err != nil {
				return err
			}
		}
		if err := r.authorizeClones(ctx, obj, old); err != nil {
			return err
		}
		newVM, ok1 := obj.(*kubevirtv1.VirtualMachine)
		oldVM, ok2 := old.(*kubevirtv1.VirtualMachine)
		if ok1 && ok2 && sameExpansionInputs(newVM, oldVM) {
			// A start, a label or the run strategy: what was accepted stays accepted, even if
			// the instance type has since been deleted (the VM goes on with its revision).
			return nil
		}
		return r.check(ctx, obj)
	}
}

func sameExpansionInputs(a, b *kubevirtv1.VirtualMachine) bool {
	return apiequality.Semantic.DeepEqual(a.Spec.Instancetype, b.Spec.Instancetype) &&
		apiequality.Semantic.DeepEqual(a.Spec.Preference, b.Spec.Preference) &&
		apiequality.Semantic.DeepEqual(a.Spec.Template, b.Spec.Template)
}

func (r *REST) check(ctx context.Context, obj runtime.Object) error {
	vm, ok := obj.(*kubevirtv1.VirtualMachine)
	if !ok || r.instancetypes == nil {
		return nil
	}
	errs, err := CheckInstancetype(ctx, *r.instancetypes, vm)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(kubevirtv1.Kind("VirtualMachine"), vm.Name, errs)
	}
	return nil
}

// CheckInstancetype validates vm against the instance type and preference it names, as KubeVirt's
// admission does: both must exist; the instance type may not set what the template sets itself
// (each conflict names the template's field); the preference's requirements must be met; and
// the template as the instance type and preference complete it must be a valid instance (its
// memory, for one, comes from the instance type). The error is for a failure to read them other
// than their absence. Defaults are applied after the preference, which fills fields first.
func CheckInstancetype(ctx context.Context, g revision.Getters, vm *kubevirtv1.VirtualMachine) (field.ErrorList, error) {
	if vm.Spec.Template == nil || (vm.Spec.Instancetype == nil && vm.Spec.Preference == nil) {
		return nil, nil
	}
	tmpl, _, errs, err := expandTemplate(ctx, g, vm)
	if err != nil || len(errs) > 0 {
		return errs, err
	}
	kubevirtv1.DefaultInstanceSpec(&tmpl.Spec)
	return validation.ValidateVMISpec(&tmpl.Spec, templatePath.Child("spec")), nil
}

// templatePath is where a VM's template lies; conflicts are named below it.
var templatePath = field.NewPath("spec", "template")

// expandTemplate returns a copy of vm's template completed by the instance type and preference it
// names, and the preference's spec. A missing object or a conflict is a field error; a failure
// to read is the error.
func expandTemplate(ctx context.Context, g revision.Getters, vm *kubevirtv1.VirtualMachine) (*kubevirtv1.VirtualMachineInstanceTemplateSpec,
	*instancetypev1beta1.VirtualMachinePreferenceSpec, field.ErrorList, error) {
	it, pref, err := g.Specs(ctx, vm)
	if err != nil {
		// The matchers' kinds were validated with the VM; what is left to refuse is an object
		// (or a pinned revision) that does not exist. Any other failure is the server's.
		var lookup *revision.LookupError
		if !errors.As(err, &lookup) || !apierrors.IsNotFound(err) {
			// Not the request's fault (the store, or a revision this server may not read):
			// a 500 saying so, not the internal call's own status.
			return nil, nil, nil, apierrors.NewInternalError(fmt.Errorf("reading the instance type and preference: %w", err))
		}
		what, name := "instancetype", ""
		if strings.HasPrefix(lookup.Field.String(), "spec.preference") {
			what, name = "preference", vm.Spec.Preference.Name
		} else {
			name = vm.Spec.Instancetype.Name
		}
		return nil, nil, field.ErrorList{&field.Error{Type: field.ErrorTypeNotFound, Field: lookup.Field.String(), BadValue: name,
			Detail: "Failure to find " + what + ": " + err.Error()}}, nil
	}
	tmpl := vm.Spec.Template.DeepCopy()
	if errs := instancetype.Apply(templatePath, it, pref, &tmpl.ObjectMeta, &tmpl.Spec); len(errs) > 0 {
		return nil, nil, errs, nil
	}
	return tmpl, pref, nil, nil
}

// defaultMatcherKinds gives a matcher without a kind the cluster-wide kind, written as KubeVirt's
// defaulting writes it (the singular resource name).
func defaultMatcherKinds(vm *kubevirtv1.VirtualMachine) {
	if m := vm.Spec.Instancetype; m != nil && m.Kind == "" && m.InferFromVolume == "" {
		m.Kind = instancetypev1beta1.ClusterSingularResourceName
	}
	if m := vm.Spec.Preference; m != nil && m.Kind == "" && m.InferFromVolume == "" {
		m.Kind = instancetypev1beta1.ClusterSingularPreferenceResourceName
	}
}
