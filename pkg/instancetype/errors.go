package instancetype

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// conflictFmt is KubeVirt's message for a template field the instance type also sets
// (pkg/instancetype/conflict/conflicts.go).
const conflictFmt = "VM field(s) %s conflicts with selected instance type"

// requirementsFmt is how KubeVirt's VM admission wraps an unmet preference requirement
// (pkg/virt-api/webhooks/validating-webhook/admitters/vms-admitter.go).
const requirementsFmt = "failure checking preference requirements: %s"

// Paths KubeVirt reports outside the template: the instance type's vCPU count when a spread
// topology cannot divide it, and the preference's CPU settings. They are not paths of the
// VirtualMachine but name the object at fault, as KubeVirt's admission does.
var (
	instancetypeCPUGuestPath = field.NewPath("instancetype", "spec", "cpu", "guest")
	preferenceCPUPath        = field.NewPath("preference", "spec", "cpu")
)

// conflict reports a template field the instance type sets too. KubeVirt reports it as an
// invalid value without the value (the template's value is often a whole struct).
func conflict(p *field.Path) *field.Error {
	return &field.Error{
		Type:     field.ErrorTypeInvalid,
		Field:    p.String(),
		BadValue: field.OmitValueType{},
		Detail:   fmt.Sprintf(conflictFmt, p.String()),
	}
}

// unmet reports a preference requirement the instance type or the template does not meet.
// KubeVirt's cause type for it is FieldValueNotFound; ErrorTypeNotFound keeps that type.
func unmet(p *field.Path, format string, args ...any) *field.Error {
	return &field.Error{
		Type:     field.ErrorTypeNotFound,
		Field:    p.String(),
		BadValue: field.OmitValueType{},
		Detail:   fmt.Sprintf(requirementsFmt, fmt.Sprintf(format, args...)),
	}
}
