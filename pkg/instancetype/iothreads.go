package instancetype

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// applyIOThreadsPolicy gives the domain the instance type's IO threads policy
// (KubeVirt's pkg/instancetype/apply/iothreadpolicy.go).
func applyIOThreadsPolicy(specPath *field.Path, it *instancetypev1beta1.VirtualMachineInstancetypeSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if it.IOThreadsPolicy == nil {
		return nil
	}
	if spec.Domain.IOThreadsPolicy != nil {
		return field.ErrorList{conflict(specPath.Child("domain", "ioThreadsPolicy"))}
	}
	spec.Domain.IOThreadsPolicy = new(*it.IOThreadsPolicy)
	return nil
}

// applyIOThreads gives the domain the instance type's supplemental pool size, the one setting of
// ioThreads (KubeVirt 1.7's pkg/instancetype/apply/iothreads.go). Only the pool size conflicts,
// so a template's ioThreads without one takes the instance type's.
func applyIOThreads(specPath *field.Path, it *instancetypev1beta1.VirtualMachineInstancetypeSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if it.IOThreads == nil || it.IOThreads.SupplementalPoolThreadCount == nil {
		return nil
	}
	if t := spec.Domain.IOThreads; t != nil && t.SupplementalPoolThreadCount != nil {
		return field.ErrorList{conflict(specPath.Child("domain", "ioThreads", "supplementalPoolThreadCount"))}
	}
	if spec.Domain.IOThreads == nil {
		spec.Domain.IOThreads = &kubevirtv1.DiskIOThreads{}
	}
	spec.Domain.IOThreads.SupplementalPoolThreadCount = new(*it.IOThreads.SupplementalPoolThreadCount)
	return nil
}
