package validation

import (
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateDNSLabel reports a value that is not a DNS-1123 label (at most 63 characters of
// lower-case alphanumerics and '-'). Names of VMs, VMIs, disks and volumes become host names,
// pod names and device aliases, so they are held to the strictest common rule.
func validateDNSLabel(value string, path *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsDNS1123Label(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}

// validateOptionalDNSLabel is validateDNSLabel for fields that may be empty.
func validateOptionalDNSLabel(value string, path *field.Path) field.ErrorList {
	if value == "" {
		return nil
	}
	return validateDNSLabel(value, path)
}

// validateObjectName holds metadata.name of a VM or VMI to a DNS-1123 label: the name becomes
// the guest's host name and part of the launcher pod's name. An empty name is left to the
// generic registry, which reports it (or generates one from generateName) before this runs.
func validateObjectName(name string, path *field.Path) field.ErrorList {
	return validateOptionalDNSLabel(name, path)
}

// nameSet records names seen in a list and reports the second use of each as Duplicate.
type nameSet map[string]struct{}

// add records name and returns a Duplicate error if it was already recorded. Empty names are
// not recorded: the caller reports them as Required.
func (s nameSet) add(name string, path *field.Path) *field.Error {
	if name == "" {
		return nil
	}
	if _, seen := s[name]; seen {
		return field.Duplicate(path, name)
	}
	s[name] = struct{}{}
	return nil
}

// has reports whether name was recorded.
func (s nameSet) has(name string) bool {
	_, ok := s[name]
	return ok
}

// appendErr appends err to errs when it is not nil.
func appendErr(errs field.ErrorList, err *field.Error) field.ErrorList {
	if err == nil {
		return errs
	}
	return append(errs, err)
}
