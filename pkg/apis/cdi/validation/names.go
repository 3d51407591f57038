package validation

import (
	"slices"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateName holds metadata.name to a DNS-1123 subdomain: a DataVolume's claim has its name.
// An empty name is left to the generic registry, which reports it first.
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

// validateObjectName requires name and holds it to a DNS-1123 subdomain (the names of claims,
// snapshots, Secrets, ConfigMaps and DataSources).
func validateObjectName(name string, path *field.Path, missing string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, missing)}
	}
	return validateOptionalName(name, path)
}

// validateOptionalName holds a name, when given, to a DNS-1123 subdomain.
func validateOptionalName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// validateRequiredNamespace requires a namespace name.
func validateRequiredNamespace(ns string, path *field.Path, missing string) field.ErrorList {
	if ns == "" {
		return field.ErrorList{field.Required(path, missing)}
	}
	return validateNamespace(ns, path)
}

// validateNamespace holds a namespace name to a DNS-1123 label.
func validateNamespace(ns string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apimachineryvalidation.ValidateNamespaceName(ns, false) {
		errs = append(errs, field.Invalid(path, ns, msg))
	}
	return errs
}

// required is the error of a nil object, which only a caller's bug can produce.
func required() field.ErrorList {
	return field.ErrorList{field.Required(field.NewPath("metadata"), "an object is required")}
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }
