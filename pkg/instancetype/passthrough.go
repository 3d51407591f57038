package instancetype

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// applyPassthrough gives the guest the instance type's GPUs and host devices. A template with
// devices of the same kind conflicts: the lists are not merged (KubeVirt's
// pkg/instancetype/apply/gpu.go and hostdevices.go).
func applyPassthrough(specPath *field.Path, it *instancetypev1beta1.VirtualMachineInstancetypeSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	devicesPath := specPath.Child("domain", "devices")
	var errs field.ErrorList
	errs = append(errs, setList(devicesPath.Child("gpus"), it.GPUs, &spec.Domain.Devices.GPUs)...)
	errs = append(errs, setList(devicesPath.Child("hostDevices"), it.HostDevices, &spec.Domain.Devices.HostDevices)...)
	return errs
}

// setList sets *target to a deep copy of from, unless from is empty; a non-empty *target
// conflicts.
func setList[T any, P interface {
	*T
	DeepCopyInto(*T)
}](p *field.Path, from []T, target *[]T) field.ErrorList {
	if len(from) == 0 {
		return nil
	}
	if len(*target) > 0 {
		return field.ErrorList{conflict(p)}
	}
	out := make([]T, len(from))
	for i := range from {
		P(&from[i]).DeepCopyInto(&out[i])
	}
	*target = out
	return nil
}
