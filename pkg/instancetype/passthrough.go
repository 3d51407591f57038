package instancetype

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// applyGPUs gives the guest the instance type's GPUs. A template with GPUs of its own conflicts:
// the lists are not merged (KubeVirt's pkg/instancetype/apply/gpu.go).
func applyGPUs(specPath *field.Path, it *instancetypev1beta1.VirtualMachineInstancetypeSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if len(it.GPUs) == 0 {
		return nil
	}
	if len(spec.Domain.Devices.GPUs) > 0 {
		return field.ErrorList{conflict(specPath.Child("domain", "devices", "gpus"))}
	}
	spec.Domain.Devices.GPUs = make([]kubevirtv1.GPU, len(it.GPUs))
	for i := range it.GPUs {
		it.GPUs[i].DeepCopyInto(&spec.Domain.Devices.GPUs[i])
	}
	return nil
}

// applyHostDevices gives the guest the instance type's host devices, as applyGPUs does GPUs
// (KubeVirt's pkg/instancetype/apply/hostdevices.go).
func applyHostDevices(specPath *field.Path, it *instancetypev1beta1.VirtualMachineInstancetypeSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if len(it.HostDevices) == 0 {
		return nil
	}
	if len(spec.Domain.Devices.HostDevices) > 0 {
		return field.ErrorList{conflict(specPath.Child("domain", "devices", "hostDevices"))}
	}
	spec.Domain.Devices.HostDevices = make([]kubevirtv1.HostDevice, len(it.HostDevices))
	for i := range it.HostDevices {
		it.HostDevices[i].DeepCopyInto(&spec.Domain.Devices.HostDevices[i])
	}
	return nil
}
