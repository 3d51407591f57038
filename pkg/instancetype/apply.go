package instancetype

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// Apply expands an instance's metadata and spec (a copy of the VirtualMachine's template, which
// it changes) with an instance type spec and a preference spec, either of which may be nil.
// fldPath is the path of the template in the VirtualMachine (field.NewPath("spec", "template")),
// so that a conflict names e.g. spec.template.spec.domain.cpu.sockets; nil means that path.
//
// It returns the conflicts and unmet requirements, in KubeVirt's order
// (pkg/instancetype/apply/vmi.go and the VM admission that calls it): an instance type whose
// vCPUs the preference's topology cannot lay out is returned alone, before anything changed;
// then every conflict of the template with the instance type, with the spec partly expanded and
// the preference not applied; then, with the spec fully expanded, the unmet requirements. With
// both specs nil nothing changes. The specs themselves are never changed or aliased: everything
// Apply puts into meta and spec is a copy.
func Apply(fldPath *field.Path, it *instancetypev1beta1.VirtualMachineInstancetypeSpec, pref *instancetypev1beta1.VirtualMachinePreferenceSpec,
	meta *metav1.ObjectMeta, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if it == nil && pref == nil {
		return nil
	}
	if fldPath == nil {
		fldPath = field.NewPath("spec", "template")
	}
	if meta == nil || spec == nil {
		return field.ErrorList{field.InternalError(fldPath, errors.New("no instance metadata or spec to expand"))}
	}
	if it != nil {
		if errs := applyInstancetype(fldPath, it, pref, meta, spec); len(errs) > 0 {
			return errs
		}
	}
	if pref != nil {
		applyPreference(pref, meta, spec)
	}
	return CheckRequirements(fldPath, it, pref, spec)
}

// applyInstancetype sets what the instance type gives, in the order of KubeVirt's
// pkg/instancetype/apply/vmi.go, collecting the conflicts of every part.
func applyInstancetype(fldPath *field.Path, it *instancetypev1beta1.VirtualMachineInstancetypeSpec,
	pref *instancetypev1beta1.VirtualMachinePreferenceSpec, meta *metav1.ObjectMeta, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	// KubeVirt's VM admission checks the spread before applying anything
	// (pkg/instancetype/webhooks/vm/admitter.go); computing the topology first does the same.
	topo, err := topology(it.CPU.Guest, pref)
	if err != nil {
		return field.ErrorList{err}
	}
	specPath := fldPath.Child("spec")
	var errs field.ErrorList
	errs = append(errs, applyNodeSelector(specPath, it, spec)...)
	errs = append(errs, applySchedulerName(specPath, it, spec)...)
	errs = append(errs, applyCPU(specPath, &it.CPU, topo, spec)...)
	errs = append(errs, applyMemory(specPath, &it.Memory, spec)...)
	errs = append(errs, applyIOThreadsPolicy(specPath, it, spec)...)
	errs = append(errs, applyIOThreads(specPath, it, spec)...)
	errs = append(errs, applyLaunchSecurity(specPath, it, spec)...)
	errs = append(errs, applyPassthrough(specPath, it, spec)...)
	errs = append(errs, applyInstancetypeAnnotations(fldPath.Child("metadata"), it.Annotations, meta)...)
	return errs
}
