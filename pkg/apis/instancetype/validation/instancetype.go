package validation

import (
	"fmt"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtvalidation "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/validation"
)

// ValidateVirtualMachineInstancetype validates a new namespaced instance type.
func ValidateVirtualMachineInstancetype(it *v1beta1.VirtualMachineInstancetype) field.ErrorList {
	if it == nil {
		return required()
	}
	return validateInstancetype(it.Name, &it.Spec)
}

// ValidateVirtualMachineInstancetypeUpdate validates a changed namespaced instance type: the new
// object must be valid; its spec may differ from the old one.
func ValidateVirtualMachineInstancetypeUpdate(newIT, oldIT *v1beta1.VirtualMachineInstancetype) field.ErrorList {
	if oldIT == nil {
		return required()
	}
	return ValidateVirtualMachineInstancetype(newIT)
}

// ValidateVirtualMachineClusterInstancetype validates a new cluster-wide instance type.
func ValidateVirtualMachineClusterInstancetype(it *v1beta1.VirtualMachineClusterInstancetype) field.ErrorList {
	if it == nil {
		return required()
	}
	return validateInstancetype(it.Name, &it.Spec)
}

// ValidateVirtualMachineClusterInstancetypeUpdate validates a changed cluster-wide instance type.
func ValidateVirtualMachineClusterInstancetypeUpdate(newIT, oldIT *v1beta1.VirtualMachineClusterInstancetype) field.ErrorList {
	if oldIT == nil {
		return required()
	}
	return ValidateVirtualMachineClusterInstancetype(newIT)
}

// validateInstancetype validates the name and spec that both kinds of instance type have.
func validateInstancetype(name string, spec *v1beta1.VirtualMachineInstancetypeSpec) field.ErrorList {
	return append(validateName(name), ValidateInstancetypeSpec(spec, field.NewPath("spec"))...)
}

// ValidateInstancetypeSpec validates an instance type spec found at path.
func ValidateInstancetypeSpec(spec *v1beta1.VirtualMachineInstancetypeSpec, path *field.Path) field.ErrorList {
	if spec == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	errs = append(errs, kubevirtvalidation.CheckUnsupportedInstancetypeSpec(spec, path)...)
	errs = append(errs, validateCPU(&spec.CPU, path.Child("cpu"))...)
	errs = append(errs, validateMemory(&spec.Memory, path.Child("memory"))...)
	errs = append(errs, kubevirtvalidation.ValidateIOThreads(spec.IOThreadsPolicy, spec.IOThreads, path)...)
	// The node selector joins the launcher pod's, and the annotations the instance's.
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, path.Child("nodeSelector"))...)
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(spec.Annotations, path.Child("annotations"))...)
	return errs
}

// validateCPU requires the vCPU count, within what an instance may have, and well-formed
// optional settings.
func validateCPU(cpu *v1beta1.CPUInstancetype, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	guestPath := path.Child("guest")
	switch {
	case cpu.Guest == 0:
		errs = append(errs, field.Required(guestPath, "the number of vCPUs (at least 1)"))
	case cpu.Guest < 0:
		errs = append(errs, field.Invalid(guestPath, cpu.Guest, "must be greater than or equal to 1"))
	case cpu.Guest > kubevirtvalidation.MaxVCPUs:
		// Every preferred topology lays all of them out, so the instance would have that many.
		errs = append(errs, field.Invalid(guestPath, cpu.Guest,
			fmt.Sprintf("must be less than or equal to %d (the most vCPUs a guest may have)", kubevirtvalidation.MaxVCPUs)))
	}
	if cpu.Model != nil && *cpu.Model == "" {
		errs = append(errs, field.Invalid(path.Child("model"), *cpu.Model,
			"must not be empty when set (host-model, host-passthrough or a named model)"))
	}
	if cpu.MaxSockets != nil && *cpu.MaxSockets < 1 {
		errs = append(errs, field.Invalid(path.Child("maxSockets"), *cpu.MaxSockets, "must be greater than or equal to 1"))
	}
	return errs
}

// validateMemory requires the guest's memory, within what an instance accepts, a hotplug
// ceiling not below it and an overcommit percentage.
func validateMemory(mem *v1beta1.MemoryInstancetype, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	guestPath := path.Child("guest")
	if mem.Guest.IsZero() {
		errs = append(errs, field.Required(guestPath, "the guest's memory"))
	} else {
		errs = append(errs, kubevirtvalidation.ValidateGuestMemory(mem.Guest, guestPath)...)
	}
	if mem.MaxGuest != nil && mem.MaxGuest.Cmp(mem.Guest) < 0 {
		errs = append(errs, field.Invalid(path.Child("maxGuest"), mem.MaxGuest.String(),
			fmt.Sprintf("must be greater than or equal to %s (%s)", guestPath, mem.Guest.String())))
	}
	if p := mem.OvercommitPercent; p < 0 || p > 100 {
		errs = append(errs, field.Invalid(path.Child("overcommitPercent"), p, "must be between 0 and 100, inclusive"))
	}
	return errs
}
