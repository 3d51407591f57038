package instancetype

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// applyLaunchSecurity gives the domain the instance type's confidential computing settings,
// whole: a template with launchSecurity of its own conflicts
// (KubeVirt's pkg/instancetype/apply/launchsecurity.go).
func applyLaunchSecurity(specPath *field.Path, it *instancetypev1beta1.VirtualMachineInstancetypeSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if it.LaunchSecurity == nil {
		return nil
	}
	if spec.Domain.LaunchSecurity != nil {
		return field.ErrorList{conflict(specPath.Child("domain", "launchSecurity"))}
	}
	spec.Domain.LaunchSecurity = it.LaunchSecurity.DeepCopy()
	return nil
}
