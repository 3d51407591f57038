package convert

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

const mebibyte = 1 << 20

// GuestMemory is the memory the guest sees: memory.guest, else the memory
// request. ok is false when neither is set.
func GuestMemory(spec *kubevirtv1.DomainSpec) (q resource.Quantity, ok bool) {
	if spec.Memory != nil && spec.Memory.Guest != nil {
		return *spec.Memory.Guest, true
	}
	q, ok = spec.Resources.Requests[corev1.ResourceMemory]
	return q, ok
}

// convertMemory gives the domain's <memory> in MiB, rounded up (QEMU sizes
// guest RAM in whole MiB anyway).
func convertMemory(spec *kubevirtv1.DomainSpec, p *field.Path) (Memory, field.ErrorList) {
	q, ok := GuestMemory(spec)
	if !ok {
		return Memory{}, field.ErrorList{field.Required(p.Child("resources", "requests", "memory"),
			"the guest memory comes from memory.guest or resources.requests.memory; neither is set")}
	}
	var errs field.ErrorList
	if m := spec.Memory; m != nil {
		if m.Hugepages != nil {
			errs = append(errs, field.Forbidden(p.Child("memory", "hugepages"), "huge pages are not supported"))
		}
		if m.MaxGuest != nil && m.MaxGuest.Cmp(q) > 0 {
			errs = append(errs, field.Forbidden(p.Child("memory", "maxGuest"), "memory hotplug (maxGuest above the guest memory) is not supported"))
		}
	}
	bytes := q.Value()
	if bytes <= 0 {
		errs = append(errs, field.Invalid(p.Child("memory", "guest"), q.String(), "the guest memory must be positive"))
	}
	if len(errs) > 0 {
		return Memory{}, errs
	}
	return Memory{Unit: "MiB", Value: uint64((bytes + mebibyte - 1) / mebibyte)}, nil
}
