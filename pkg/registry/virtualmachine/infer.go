package virtualmachine

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// The labels of a volume that name its default instance type and preference (KubeVirt's, as
// common-instancetypes' containerdisks and DataSources carry them).
const (
	DefaultInstancetypeLabel     = "instancetype.kubevirt.io/default-instancetype"
	DefaultInstancetypeKindLabel = "instancetype.kubevirt.io/default-instancetype-kind"
	DefaultPreferenceLabel       = "instancetype.kubevirt.io/default-preference"
	DefaultPreferenceKindLabel   = "instancetype.kubevirt.io/default-preference-kind"
)

// ClaimGetter reads a PersistentVolumeClaim.
type ClaimGetter func(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error)

// errIgnorable marks an inference failure that policy Ignore may pass over: the volume is of a
// kind that names nothing, or carries no label.
var errIgnorable = errors.New("ignorable")

// errRead marks a failure to read the claim: the server's, not the request's.
var errRead = errors.New("reading the volume's claim")

// inferMatchers replaces a matcher that says inferFromVolume by the instance type (preference)
// the volume's labels name, as KubeVirt's VM mutation does: the volume must be a
// persistentVolumeClaim (DataVolumes are not served) whose claim carries the default label
// (the kind label is optional). With inferFromVolumeFailurePolicy Ignore, a volume that names
// nothing drops the matcher, and the template's own domain.memory is the fallback; when the
// instance type is found, that memory is dropped instead (it would conflict). A failure to read
// the claim other than its absence is the error.
func inferMatchers(ctx context.Context, claims ClaimGetter, vm *kubevirtv1.VirtualMachine) (field.ErrorList, error) {
	var errs field.ErrorList
	if m := vm.Spec.Instancetype; m != nil && m.InferFromVolume != "" {
		path := field.NewPath("spec", "instancetype", "inferFromVolume")
		ignore := m.InferFromVolumeFailurePolicy != nil && *m.InferFromVolumeFailurePolicy == kubevirtv1.IgnoreInferFromVolumeFailure
		name, kind, err := fromVolume(ctx, claims, vm, m.InferFromVolume, DefaultInstancetypeLabel, DefaultInstancetypeKindLabel)
		switch {
		case err == nil:
			if ignore && vm.Spec.Template != nil {
				vm.Spec.Template.Spec.Domain.Memory = nil
			}
			vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: name, Kind: kind}
		case ignore && errors.Is(err, errIgnorable):
			vm.Spec.Instancetype = nil
		case errors.Is(err, errRead):
			return nil, err
		default:
			errs = append(errs, field.Invalid(path, m.InferFromVolume, "failed to infer the instance type: "+err.Error()))
		}
	}
	if m := vm.Spec.Preference; m != nil && m.InferFromVolume != "" {
		path := field.NewPath("spec", "preference", "inferFromVolume")
		ignore := m.InferFromVolumeFailurePolicy != nil && *m.InferFromVolumeFailurePolicy == kubevirtv1.IgnoreInferFromVolumeFailure
		name, kind, err := fromVolume(ctx, claims, vm, m.InferFromVolume, DefaultPreferenceLabel, DefaultPreferenceKindLabel)
		switch {
		case err == nil:
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: name, Kind: kind}
		case ignore && errors.Is(err, errIgnorable):
			vm.Spec.Preference = nil
		case errors.Is(err, errRead):
			return nil, err
		default:
			errs = append(errs, field.Invalid(path, m.InferFromVolume, "failed to infer the preference: "+err.Error()))
		}
	}
	return errs, nil
}

// fromVolume reads the labels naming a default from the volume called volumeName.
func fromVolume(ctx context.Context, claims ClaimGetter, vm *kubevirtv1.VirtualMachine, volumeName, nameLabel, kindLabel string) (string, string, error) {
	if vm.Spec.Template == nil {
		return "", "", fmt.Errorf("the VM has no template")
	}
	for _, v := range vm.Spec.Template.Spec.Volumes {
		if v.Name != volumeName {
			continue
		}
		if v.PersistentVolumeClaim == nil {
			return "", "", fmt.Errorf("%w: volume %s is not a persistentVolumeClaim, the one kind NativeVirt infers from", errIgnorable, volumeName)
		}
		claim, err := claims(ctx, vm.Namespace, v.PersistentVolumeClaim.ClaimName)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return "", "", fmt.Errorf("PersistentVolumeClaim %s not found", v.PersistentVolumeClaim.ClaimName)
			}
			return "", "", fmt.Errorf("%w %s: %w", errRead, v.PersistentVolumeClaim.ClaimName, err)
		}
		name, ok := claim.Labels[nameLabel]
		if !ok {
			return "", "", fmt.Errorf("%w: PersistentVolumeClaim %s has no label %s", errIgnorable, claim.Name, nameLabel)
		}
		return name, claim.Labels[kindLabel], nil
	}
	return "", "", fmt.Errorf("the VM has no volume %s", volumeName)
}
