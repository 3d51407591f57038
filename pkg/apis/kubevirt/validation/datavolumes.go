package validation

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	cdivalidation "github.com/nativevirt/nativevirt/pkg/apis/cdi/validation"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// validateDataVolumeTemplates checks a VirtualMachine's spec.dataVolumeTemplates with
// KubeVirt's rules: each has a name (unique among the templates), lives in the VM's namespace,
// has a valid CDI DataVolume spec, and is used by a dataVolume volume of the instance template
// (a template nothing uses would create a DataVolume no guest ever sees).
func validateDataVolumeTemplates(spec *kubevirtv1.VirtualMachineSpec, namespace string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	used := map[string]bool{}
	if spec.Template != nil {
		for _, v := range spec.Template.Spec.Volumes {
			if v.DataVolume != nil {
				used[v.DataVolume.Name] = true
			}
		}
	}
	names := nameSet{}
	for i := range spec.DataVolumeTemplates {
		t := &spec.DataVolumeTemplates[i]
		p := fldPath.Index(i)
		metaPath := p.Child("metadata")
		if t.Name == "" {
			errs = append(errs, field.Required(metaPath.Child("name"),
				fmt.Sprintf("'name' field must not be empty for DataVolumeTemplate entry %s.", p)))
		} else {
			for _, msg := range apivalidation.NameIsDNSSubdomain(t.Name, false) {
				errs = append(errs, field.Invalid(metaPath.Child("name"), t.Name, msg))
			}
			if dup := names.add(t.Name, metaPath.Child("name")); dup != nil {
				errs = append(errs, dup)
			}
			if !used[t.Name] {
				errs = append(errs, field.Invalid(metaPath.Child("name"), t.Name,
					fmt.Sprintf("DataVolumeTemplate entry %s must be referenced in the VMI template's 'volumes' list", p)))
			}
		}
		if t.Namespace != "" && namespace != "" && t.Namespace != namespace {
			errs = append(errs, field.Invalid(metaPath.Child("namespace"), t.Namespace,
				fmt.Sprintf("Embedded DataVolume namespace %s differs from VM namespace %s", t.Namespace, namespace)))
		}
		errs = append(errs, metav1validation.ValidateLabels(t.Labels, metaPath.Child("labels"))...)
		errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, metaPath.Child("annotations"))...)
		errs = append(errs, cdivalidation.ValidateDataVolumeSpec(&t.Spec, p.Child("spec"))...)
	}
	return errs
}

// validateDataVolumeVolume checks a dataVolume volume: it names its DataVolume.
func validateDataVolumeVolume(dv *kubevirtv1.DataVolumeSource, fldPath *field.Path) field.ErrorList {
	if dv.Name == "" {
		return field.ErrorList{field.Required(fldPath.Child("name"), "DataVolume 'name' must be set")}
	}
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(dv.Name, false) {
		errs = append(errs, field.Invalid(fldPath.Child("name"), dv.Name, msg))
	}
	return errs
}
