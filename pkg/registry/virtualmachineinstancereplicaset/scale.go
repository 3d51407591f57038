package virtualmachineinstancereplicaset

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// ScaleREST serves /scale as autoscaling/v1 Scale, so `kubectl scale vmirs` and autoscalers work.
type ScaleREST struct {
	store *genericregistry.Store
}

var (
	_ rest.Getter                   = &ScaleREST{}
	_ rest.Updater                  = &ScaleREST{}
	_ rest.Patcher                  = &ScaleREST{}
	_ rest.GroupVersionKindProvider = &ScaleREST{}
)

// GroupVersionKind says the subresource speaks autoscaling/v1 Scale whatever the parent version.
func (r *ScaleREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}

// New returns an empty Scale.
func (r *ScaleREST) New() runtime.Object { return &autoscalingv1.Scale{} }

// Destroy is a no-op: the main store owns the storage.
func (r *ScaleREST) Destroy() {}

// Get returns the replica set's scale.
func (r *ScaleREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return scaleOf(obj.(*kubevirtv1.VirtualMachineInstanceReplicaSet))
}

// Update sets spec.replicas from the Scale; everything else of the replica set stays.
func (r *ScaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo,
	createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc,
	_ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, _, err := r.store.Update(ctx, name, &scaleUpdate{name: name, inner: objInfo},
		asReplicaSetCreateValidation(createValidation), asReplicaSetUpdateValidation(updateValidation), false, options)
	if err != nil {
		return nil, false, err
	}
	scale, err := scaleOf(obj.(*kubevirtv1.VirtualMachineInstanceReplicaSet))
	return scale, false, err
}

// scaleOf projects a replica set onto a Scale. The selector is rendered from spec so that it is
// right before the controller first writes status.
func scaleOf(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) (*autoscalingv1.Scale, error) {
	selector := ""
	if rs.Spec.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("stored selector of %s/%s: %w", rs.Namespace, rs.Name, err))
		}
		selector = s.String()
	}
	replicas := int32(1)
	if rs.Spec.Replicas != nil {
		replicas = *rs.Spec.Replicas
	}
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name:              rs.Name,
			Namespace:         rs.Namespace,
			UID:               rs.UID,
			ResourceVersion:   rs.ResourceVersion,
			CreationTimestamp: rs.CreationTimestamp,
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: replicas},
		Status: autoscalingv1.ScaleStatus{Replicas: rs.Status.Replicas, Selector: selector},
	}, nil
}

// scaleUpdate turns the caller's Scale into an updated replica set.
type scaleUpdate struct {
	name  string
	inner rest.UpdatedObjectInfo
}

func (u *scaleUpdate) Preconditions() *metav1.Preconditions { return u.inner.Preconditions() }

func (u *scaleUpdate) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	rs, ok := oldObj.DeepCopyObject().(*kubevirtv1.VirtualMachineInstanceReplicaSet)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("unexpected object %T", oldObj))
	}
	oldScale, err := scaleOf(rs)
	if err != nil {
		return nil, err
	}
	obj, err := u.inner.UpdatedObject(ctx, oldScale)
	if err != nil {
		return nil, err
	}
	scale, ok := obj.(*autoscalingv1.Scale)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected an autoscaling/v1 Scale, got %T", obj))
	}
	if errs := validateScale(scale); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: autoscalingv1.GroupName, Kind: "Scale"}, u.name, errs)
	}
	if scale.ResourceVersion != "" {
		// Optimistic concurrency: a Scale read at an older version must not overwrite newer state.
		rs.ResourceVersion = scale.ResourceVersion
	}
	replicas := scale.Spec.Replicas
	rs.Spec.Replicas = &replicas
	return rs, nil
}

func validateScale(scale *autoscalingv1.Scale) field.ErrorList {
	var errs field.ErrorList
	if scale.Spec.Replicas < 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "replicas"), scale.Spec.Replicas, "must be greater than or equal to 0"))
	}
	return errs
}

// Admission sees the Scale, not the replica set: convert before calling it.
func asReplicaSetCreateValidation(v rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	return func(ctx context.Context, obj runtime.Object) error {
		if v == nil {
			return nil
		}
		scale, err := scaleOf(obj.(*kubevirtv1.VirtualMachineInstanceReplicaSet))
		if err != nil {
			return err
		}
		return v(ctx, scale)
	}
}

func asReplicaSetUpdateValidation(v rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	return func(ctx context.Context, obj, old runtime.Object) error {
		if v == nil {
			return nil
		}
		newScale, err := scaleOf(obj.(*kubevirtv1.VirtualMachineInstanceReplicaSet))
		if err != nil {
			return err
		}
		oldScale, err := scaleOf(old.(*kubevirtv1.VirtualMachineInstanceReplicaSet))
		if err != nil {
			return err
		}
		return v(ctx, newScale, oldScale)
	}
}
