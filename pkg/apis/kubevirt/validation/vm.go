package validation

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

var (
	// runStrategies are the run strategies NativeVirt implements. WaitAsReceiver is refused
	// by the unsupported table.
	runStrategies = []kubevirtv1.VirtualMachineRunStrategy{kubevirtv1.RunStrategyAlways, kubevirtv1.RunStrategyRerunOnFailure,
		kubevirtv1.RunStrategyManual, kubevirtv1.RunStrategyHalted, kubevirtv1.RunStrategyOnce}
	updateVolumesStrategies = []kubevirtv1.UpdateVolumesStrategy{kubevirtv1.UpdateVolumesStrategyReplacement,
		kubevirtv1.UpdateVolumesStrategyMigration}
)

// ValidateVirtualMachine validates a new VirtualMachine: its name, its run strategy and its
// instance template.
func ValidateVirtualMachine(vm *kubevirtv1.VirtualMachine) field.ErrorList {
	if vm == nil {
		return field.ErrorList{field.Required(field.NewPath("metadata"), "a VirtualMachine is required")}
	}
	var errs field.ErrorList
	errs = append(errs, validateObjectName(vm.Name, field.NewPath("metadata", "name"))...)
	errs = append(errs, validateVMSpec(&vm.Spec, field.NewPath("spec"))...)
	errs = append(errs, validateDataVolumeTemplates(&vm.Spec, vm.Namespace, field.NewPath("spec", "dataVolumeTemplates"))...)
	return errs
}

// ValidateVirtualMachineUpdate validates a changed VirtualMachine as if it were new: the
// spec stays mutable and changes take effect at the next start of the guest.
func ValidateVirtualMachineUpdate(newVM, oldVM *kubevirtv1.VirtualMachine) field.ErrorList {
	if oldVM == nil {
		return field.ErrorList{field.Required(field.NewPath("metadata"), "a VirtualMachine is required")}
	}
	return ValidateVirtualMachine(newVM)
}

// validateVMSpec checks running versus runStrategy, the unsupported VM-level features, the
// instance type and preference matchers and the template (whose memory may come from the
// instance type).
func validateVMSpec(spec *kubevirtv1.VirtualMachineSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, check(unsupportedVMSpecFields, spec, fldPath)...)
	if spec.Running != nil && spec.RunStrategy != nil {
		errs = append(errs, field.Invalid(fldPath.Child("running"), *spec.Running,
			"running and runStrategy are mutually exclusive: set only "+fldPath.Child("runStrategy").String()))
	}
	if rs := spec.RunStrategy; rs != nil && *rs != kubevirtv1.RunStrategyWaitAsReceiver && !contains(runStrategies, *rs) {
		errs = append(errs, field.NotSupported(fldPath.Child("runStrategy"), string(*rs), runStrategies))
	}
	if s := spec.UpdateVolumesStrategy; s != nil && !contains(updateVolumesStrategies, *s) {
		errs = append(errs, field.NotSupported(fldPath.Child("updateVolumesStrategy"), string(*s), updateVolumesStrategies))
	}
	errs = append(errs, validateMatchers(spec, fldPath)...)
	tmpl := spec.Template
	if spec.Preference != nil && tmpl != nil {
		// The template of a VM with a preference is stored without defaults (see
		// SetDefaults_VirtualMachine); it is checked as the instance made from it will be.
		tmpl = tmpl.DeepCopy()
		kubevirtv1.DefaultInstanceSpec(&tmpl.Spec)
	}
	templateErrs := validateTemplate(tmpl, fldPath.Child("template"))
	if spec.Instancetype != nil {
		templateErrs = withoutInstancetypeMemory(templateErrs, fldPath.Child("template", "spec"))
	}
	errs = append(errs, templateErrs...)
	return errs
}

// validateTemplate checks an instance template: present, with valid labels and annotations
// (they are copied onto each instance), no unsupported annotations, and a valid spec.
func validateTemplate(tmpl *kubevirtv1.VirtualMachineInstanceTemplateSpec, fldPath *field.Path) field.ErrorList {
	if tmpl == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var errs field.ErrorList
	metaPath := fldPath.Child("metadata")
	errs = append(errs, metav1validation.ValidateLabels(tmpl.ObjectMeta.Labels, metaPath.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(tmpl.ObjectMeta.Annotations, metaPath.Child("annotations"))...)
	errs = append(errs, checkAnnotations(tmpl.ObjectMeta.Annotations, metaPath.Child("annotations"))...)
	errs = append(errs, ValidateVMISpec(&tmpl.Spec, fldPath.Child("spec"))...)
	return errs
}
