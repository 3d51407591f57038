package instancetype

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// applyMemory gives the instance the instance type's memory. As in KubeVirt 1.7
// (pkg/instancetype/apply/memory.go) any memory setting of the template conflicts, even one the
// instance type leaves unset (domain.memory as a whole: guest, hugepages or maxGuest), and so does
// a memory request or limit; only the first conflict is reported, as KubeVirt returns at the first.
func applyMemory(specPath *field.Path, it *instancetypev1beta1.MemoryInstancetype, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	d := &spec.Domain
	if d.Memory != nil {
		return field.ErrorList{conflict(specPath.Child("domain", "memory"))}
	}
	if _, ok := d.Resources.Requests[corev1.ResourceMemory]; ok {
		return field.ErrorList{conflict(specPath.Child("domain", "resources", "requests", string(corev1.ResourceMemory)))}
	}
	if _, ok := d.Resources.Limits[corev1.ResourceMemory]; ok {
		return field.ErrorList{conflict(specPath.Child("domain", "resources", "limits", string(corev1.ResourceMemory)))}
	}

	guest := it.Guest.DeepCopy()
	d.Memory = &kubevirtv1.Memory{Guest: &guest}
	if it.OvercommitPercent > 0 {
		if d.Resources.Requests == nil {
			d.Resources.Requests = corev1.ResourceList{}
		}
		d.Resources.Requests[corev1.ResourceMemory] = overcommittedRequest(guest, it.OvercommitPercent)
	}
	if it.Hugepages != nil {
		d.Memory.Hugepages = it.Hugepages.DeepCopy()
	}
	if it.MaxGuest != nil {
		maxGuest := it.MaxGuest.DeepCopy()
		d.Memory.MaxGuest = &maxGuest
	}
	return nil
}

// overcommittedRequest is the pod's memory request for guest memory overcommitted by percent:
// the guest memory lowered by that many percent, computed in float32 and truncated exactly as
// KubeVirt computes it, so that both give the same request byte for byte. The format of the
// guest's quantity is kept.
func overcommittedRequest(guest resource.Quantity, percent int32) resource.Quantity {
	const totalPercentage = 100
	requested := int64(float32(guest.Value()) * (1 - float32(percent)/totalPercentage))
	return *resource.NewQuantity(requested, guest.Format)
}
