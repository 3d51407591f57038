package validation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// ValidateVirtualMachineInstanceReplicaSet validates a new replica set: a DNS-1123 label as
// name (it prefixes the names of its instances, which must be labels), a non-empty selector
// that matches the template's labels (else the set would create instances it cannot see and
// never stop), a non-negative replica count and a valid template.
func ValidateVirtualMachineInstanceReplicaSet(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) field.ErrorList {
	if rs == nil {
		return field.ErrorList{field.Required(field.NewPath("spec"), "a VirtualMachineInstanceReplicaSet is required")}
	}
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	spec := &rs.Spec
	errs = append(errs, validateObjectName(rs.Name, field.NewPath("metadata", "name"))...)
	if r := spec.Replicas; r != nil && *r < 0 {
		errs = append(errs, field.Invalid(specPath.Child("replicas"), *r, "must be greater than or equal to 0"))
	}
	errs = append(errs, validateTemplate(spec.Template, specPath.Child("template"))...)
	errs = append(errs, validateSelector(spec.Selector, spec.Template, specPath)...)
	return errs
}

// validateSelector requires a well-formed, non-empty selector that selects the template.
func validateSelector(sel *metav1.LabelSelector, tmpl *kubevirtv1.VirtualMachineInstanceTemplateSpec, specPath *field.Path) field.ErrorList {
	selPath := specPath.Child("selector")
	if sel == nil {
		return field.ErrorList{field.Required(selPath, "")}
	}
	if len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		return field.ErrorList{field.Invalid(selPath, sel, "empty selector is invalid: it would select every instance")}
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, selPath)
	if len(errs) > 0 || tmpl == nil {
		return errs
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return field.ErrorList{field.Invalid(selPath, sel, err.Error())}
	}
	if !selector.Matches(labels.Set(tmpl.ObjectMeta.Labels)) {
		return field.ErrorList{field.Invalid(specPath.Child("template", "metadata", "labels"), tmpl.ObjectMeta.Labels,
			"selector does not match template labels")}
	}
	return nil
}

// ValidateVirtualMachineInstanceReplicaSetUpdate validates a changed replica set as if it were
// new; the template applies to instances created after the change.
func ValidateVirtualMachineInstanceReplicaSetUpdate(newRS, oldRS *kubevirtv1.VirtualMachineInstanceReplicaSet) field.ErrorList {
	if oldRS == nil {
		return field.ErrorList{field.Required(field.NewPath("spec"), "a VirtualMachineInstanceReplicaSet is required")}
	}
	return ValidateVirtualMachineInstanceReplicaSet(newRS)
}

// ValidateVirtualMachineInstanceReplicaSetStatusUpdate keeps the counts non-negative and the
// ready count within the total.
func ValidateVirtualMachineInstanceReplicaSetStatusUpdate(newRS, oldRS *kubevirtv1.VirtualMachineInstanceReplicaSet) field.ErrorList {
	if newRS == nil || oldRS == nil {
		return field.ErrorList{field.Required(field.NewPath("status"), "a VirtualMachineInstanceReplicaSet is required")}
	}
	var errs field.ErrorList
	statusPath := field.NewPath("status")
	status := &newRS.Status
	if status.Replicas < 0 {
		errs = append(errs, field.Invalid(statusPath.Child("replicas"), status.Replicas, "must be greater than or equal to 0"))
	}
	if status.ReadyReplicas < 0 {
		errs = append(errs, field.Invalid(statusPath.Child("readyReplicas"), status.ReadyReplicas, "must be greater than or equal to 0"))
	} else if status.Replicas >= 0 && status.ReadyReplicas > status.Replicas {
		errs = append(errs, field.Invalid(statusPath.Child("readyReplicas"), status.ReadyReplicas,
			"must be less than or equal to status.replicas"))
	}
	for i, c := range status.Conditions {
		if c.Type == "" {
			errs = append(errs, field.Required(statusPath.Child("conditions").Index(i).Child("type"), ""))
		}
	}
	return errs
}
