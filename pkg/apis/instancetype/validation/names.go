package validation

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateName holds metadata.name to a DNS-1123 subdomain, as KubeVirt's CRDs do: a
// VirtualMachine refers to the object by name, and the name becomes part of the names and labels
// of the revisions kept of it. An empty name is left to the generic registry, which reports it
// (or generates one from generateName) before this runs.
func validateName(name string) field.ErrorList {
	if name == "" {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, msg))
	}
	return errs
}

// required is the error of a nil object, which only a caller's bug can produce.
func required() field.ErrorList {
	return field.ErrorList{field.Required(field.NewPath("metadata"), "an object is required")}
}
