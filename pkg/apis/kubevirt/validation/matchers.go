package validation

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/instancetype/revision"
)

// validateMatchers checks what a VM's spec.instancetype and spec.preference say by themselves: a
// name, a kind KubeVirt knows and a well-formed revisionName. A matcher that says inferFromVolume
// has been resolved from the volume's labels before validation (package registry/virtualmachine);
// one left means nativevirt-apiserver could not read the volume (it runs without the Kubernetes
// API). Whether the objects exist, and whether the template fits them, is checked where they can
// be read.
func validateMatchers(spec *kubevirtv1.VirtualMachineSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m := spec.Instancetype; m != nil {
		path := fldPath.Child("instancetype")
		errs = append(errs, validateMatcher(m.Name, m.RevisionName, m.InferFromVolume, path)...)
		if _, err := revision.InstancetypeKind(m); err != nil {
			errs = append(errs, field.Invalid(path.Child("kind"), m.Kind, err.Error()))
		}
	}
	if m := spec.Preference; m != nil {
		path := fldPath.Child("preference")
		errs = append(errs, validateMatcher(m.Name, m.RevisionName, m.InferFromVolume, path)...)
		if _, err := revision.PreferenceKind(m); err != nil {
			errs = append(errs, field.Invalid(path.Child("kind"), m.Kind, err.Error()))
		}
	}
	return errs
}

func validateMatcher(name, revisionName, inferFromVolume string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if inferFromVolume != "" {
		errs = append(errs, field.Forbidden(path.Child("inferFromVolume"),
			"cannot be inferred here: nativevirt-apiserver runs without the Kubernetes API, where the volume's claim is"))
	}
	switch {
	case name == "" && inferFromVolume == "":
		errs = append(errs, field.Required(path.Child("name"), "the name of the object to use"))
	case name != "":
		for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
			errs = append(errs, field.Invalid(path.Child("name"), name, msg))
		}
	}
	if revisionName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(revisionName, false) {
			errs = append(errs, field.Invalid(path.Child("revisionName"), revisionName, msg))
		}
	}
	return errs
}

// withoutInstancetypeMemory drops the one error of a template whose guest memory an instance
// type gives: "memory request or memory.guest required". The template is validated again once
// the instance type has completed it, where a missing memory is an error again.
func withoutInstancetypeMemory(errs field.ErrorList, specPath *field.Path) field.ErrorList {
	requestPath := specPath.Child("domain", "resources", "requests").Key(string(corev1.ResourceMemory)).String()
	out := errs[:0:0]
	for _, e := range errs {
		if e.Type == field.ErrorTypeRequired && e.Field == requestPath {
			continue
		}
		out = append(out, e)
	}
	return out
}
