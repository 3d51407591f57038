package instancetype

import (
	"maps"

	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// applyNodeSelector gives the instance the instance type's node selector. The instance type's
// selector replaces, never merges with, the template's: a template with a selector of its own
// conflicts, even one with other keys (KubeVirt's pkg/instancetype/apply/nodeselector.go).
func applyNodeSelector(specPath *field.Path, it *instancetypev1beta1.VirtualMachineInstancetypeSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if it.NodeSelector == nil {
		return nil
	}
	if spec.NodeSelector != nil {
		return field.ErrorList{conflict(specPath.Child("nodeSelector"))}
	}
	spec.NodeSelector = maps.Clone(it.NodeSelector)
	return nil
}

// applySchedulerName gives the instance's pod the instance type's scheduler.
func applySchedulerName(specPath *field.Path, it *instancetypev1beta1.VirtualMachineInstancetypeSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if it.SchedulerName == "" {
		return nil
	}
	if spec.SchedulerName != "" {
		return field.ErrorList{conflict(specPath.Child("schedulerName"))}
	}
	spec.SchedulerName = it.SchedulerName
	return nil
}
