package instancetype

import (
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// The annotations KubeVirt puts on an instance created from a VirtualMachine with an instance
// type or preference, naming it (kubevirt.io/api core/v1 types.go). Tools and metrics read them.
const (
	// InstancetypeAnnotation names the VirtualMachineInstancetype (namespaced) of the instance.
	InstancetypeAnnotation = "kubevirt.io/instancetype-name"
	// ClusterInstancetypeAnnotation names the VirtualMachineClusterInstancetype of the instance.
	ClusterInstancetypeAnnotation = "kubevirt.io/cluster-instancetype-name"
	// PreferenceAnnotation names the VirtualMachinePreference (namespaced) of the instance.
	PreferenceAnnotation = "kubevirt.io/preference-name"
	// ClusterPreferenceAnnotation names the VirtualMachineClusterPreference of the instance.
	ClusterPreferenceAnnotation = "kubevirt.io/cluster-preference-name"
)

// SetAnnotations records on an instance's metadata the names of the instance type and preference
// its VirtualMachine references. The matcher's kind is compared as KubeVirt compares it
// (pkg/instancetype/annotations and pkg/instancetype/preference/annotations): lower-cased, against
// the singular and plural resource names; an empty kind means the cluster-wide kind (KubeVirt's
// default), and a kind that is neither is recorded under no annotation.
func SetAnnotations(vm *kubevirtv1.VirtualMachine, meta *metav1.ObjectMeta) {
	if vm == nil || meta == nil {
		return
	}
	if m := vm.Spec.Instancetype; m != nil {
		switch strings.ToLower(m.Kind) {
		case instancetypev1beta1.SingularResourceName, instancetypev1beta1.PluralResourceName:
			setAnnotation(meta, InstancetypeAnnotation, m.Name)
		case "", instancetypev1beta1.ClusterSingularResourceName, instancetypev1beta1.ClusterPluralResourceName:
			setAnnotation(meta, ClusterInstancetypeAnnotation, m.Name)
		}
	}
	if m := vm.Spec.Preference; m != nil {
		switch strings.ToLower(m.Kind) {
		case instancetypev1beta1.SingularPreferenceResourceName, instancetypev1beta1.PluralPreferenceResourceName:
			setAnnotation(meta, PreferenceAnnotation, m.Name)
		case "", instancetypev1beta1.ClusterSingularPreferenceResourceName, instancetypev1beta1.ClusterPluralPreferenceResourceName:
			setAnnotation(meta, ClusterPreferenceAnnotation, m.Name)
		}
	}
}

func setAnnotation(meta *metav1.ObjectMeta, key, value string) {
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[key] = value
}

// applyInstancetypeAnnotations adds the instance type's annotations to the instance. A key the
// template already has with the same value is fine; with another value it conflicts
// (KubeVirt's pkg/instancetype/apply/annotations.go). KubeVirt names that conflict
// annotations.<key>, outside the template; here it is the template's annotation,
// spec.template.metadata.annotations[<key>], so the path names the VirtualMachine's field. Keys
// are visited in order so that the same inputs always give the same errors.
func applyInstancetypeAnnotations(metaPath *field.Path, annotations map[string]string, meta *metav1.ObjectMeta) field.ErrorList {
	var errs field.ErrorList
	for _, key := range slices.Sorted(maps.Keys(annotations)) {
		value := annotations[key]
		if existing, ok := meta.Annotations[key]; ok {
			if existing != value {
				errs = append(errs, conflict(metaPath.Child("annotations").Key(key)))
			}
			continue
		}
		setAnnotation(meta, key, value)
	}
	return errs
}

// applyPreferenceAnnotations adds the preference's annotations the instance does not have: a key
// the template sets keeps the template's value (pkg/instancetype/preference/apply/annotations.go).
func applyPreferenceAnnotations(annotations map[string]string, meta *metav1.ObjectMeta) {
	for key, value := range annotations {
		if _, ok := meta.Annotations[key]; !ok {
			setAnnotation(meta, key, value)
		}
	}
}
