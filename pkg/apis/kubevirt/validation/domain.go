package validation

import (
	"fmt"
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// MaxVCPUs is the most vCPUs (cores × sockets × threads) a guest may have, as in KubeVirt.
const MaxVCPUs = 512

// minGuestMemory is the least memory a guest may be given (KubeVirt's 1M): QEMU cannot boot
// a machine with less.
var minGuestMemory = resource.MustParse("1M")

// supportedResources are the only resource names a guest may request or be limited to; the
// launcher pod gets them, and NativeVirt has no device plugins for anything else yet.
var supportedResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// machineTypePattern accepts the x86 machine types QEMU knows under these names: the q35 and
// i440fx aliases and their versioned forms (e.g. pc-q35-rhel9.4.0, pc-i440fx-8.2).
var machineTypePattern = regexp.MustCompile(`^(q35|pc|pc-q35-[A-Za-z0-9._-]+|pc-i440fx-[A-Za-z0-9._-]+)$`)

// validateDomain checks the virtual hardware of a guest: resources, CPU, memory, machine,
// firmware and devices other than disks and interfaces (which are checked with their volumes
// and networks).
func validateDomain(domain *kubevirtv1.DomainSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateResources(&domain.Resources, path.Child("resources"))...)
	errs = append(errs, validateMemory(domain, path)...)
	errs = append(errs, validateCPU(domain.CPU, path.Child("cpu"))...)
	errs = append(errs, validateMachine(domain.Machine, path.Child("machine"))...)
	errs = append(errs, validateFirmware(domain.Firmware, path.Child("firmware"))...)
	errs = append(errs, validateSecureBoot(domain, path)...)
	errs = append(errs, ValidateIOThreads(domain.IOThreadsPolicy, domain.IOThreads, path)...)
	errs = append(errs, validateOtherDevices(&domain.Devices, path.Child("devices"))...)
	return errs
}

// validateResources allows only cpu and memory, never negative, with limits not below requests.
func validateResources(res *kubevirtv1.ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateResourceList(res.Requests, path.Child("requests"))...)
	errs = append(errs, validateResourceList(res.Limits, path.Child("limits"))...)
	for _, name := range supportedResources {
		request, hasRequest := res.Requests[name]
		limit, hasLimit := res.Limits[name]
		if hasRequest && hasLimit && limit.Cmp(request) < 0 {
			errs = append(errs, field.Invalid(path.Child("limits").Key(string(name)), limit.String(),
				fmt.Sprintf("must be greater than or equal to %s", path.Child("requests").Key(string(name)))))
		}
	}
	return errs
}

// validateResourceList refuses unknown resource names and negative quantities.
func validateResourceList(list corev1.ResourceList, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedResourceNames(list) {
		quantity := list[name]
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			errs = append(errs, field.NotSupported(path.Key(string(name)), string(name), supportedResources))
			continue
		}
		if quantity.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Key(string(name)), quantity.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}

// validateMemory requires the guest's memory to be given, through the memory request or
// memory.guest (KubeVirt's rule), and keeps guest memory within the limit.
func validateMemory(domain *kubevirtv1.DomainSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	requestPath := path.Child("resources", "requests").Key(string(corev1.ResourceMemory))
	guestPath := path.Child("memory", "guest")
	request, hasRequest := domain.Resources.Requests[corev1.ResourceMemory]
	var guest *resource.Quantity
	var maxGuest *resource.Quantity
	if domain.Memory != nil {
		guest, maxGuest = domain.Memory.Guest, domain.Memory.MaxGuest
	}
	if !hasRequest && guest == nil {
		return field.ErrorList{field.Required(requestPath,
			fmt.Sprintf("at least one of %s or %s must be set", requestPath, guestPath))}
	}
	if hasRequest && request.Sign() >= 0 {
		errs = append(errs, validateMemoryAmount(request, requestPath)...)
	}
	if guest != nil {
		errs = append(errs, ValidateGuestMemory(*guest, guestPath)...)
		limitPath := path.Child("resources", "limits").Key(string(corev1.ResourceMemory))
		if limit, ok := domain.Resources.Limits[corev1.ResourceMemory]; ok && guest.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(guestPath, guest.String(),
				fmt.Sprintf("must be less than or equal to %s (%s)", limitPath, limit.String())))
		}
		if maxGuest != nil && maxGuest.Cmp(*guest) < 0 {
			errs = append(errs, field.Invalid(path.Child("memory", "maxGuest"), maxGuest.String(),
				fmt.Sprintf("must be greater than or equal to %s", guestPath)))
		}
	}
	return errs
}

// validateMemoryAmount refuses a zero or tiny amount of guest memory.
func validateMemoryAmount(q resource.Quantity, path *field.Path) field.ErrorList {
	if q.Sign() == 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be greater than 0")}
	}
	if q.Cmp(minGuestMemory) < 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be at least "+minGuestMemory.String())}
	}
	return nil
}

// validateCPU checks the topology: no negative counts, at most MaxVCPUs in all, and a
// hotplug ceiling not below the socket count.
func validateCPU(cpu *kubevirtv1.CPU, path *field.Path) field.ErrorList {
	if cpu == nil {
		return nil
	}
	var errs field.ErrorList
	counts := []struct {
		name  string
		value int32
	}{{"cores", cpu.Cores}, {"sockets", cpu.Sockets}, {"threads", cpu.Threads}, {"maxSockets", cpu.MaxSockets}}
	total := int64(1)
	for i, c := range counts {
		if c.value < 0 {
			errs = append(errs, field.Invalid(path.Child(c.name), c.value, "must be greater than or equal to 0"))
			continue
		}
		if i < 3 && c.value > 0 {
			total *= int64(c.value)
		}
	}
	if total > MaxVCPUs {
		errs = append(errs, field.Invalid(path, total,
			fmt.Sprintf("the guest would have %d vCPUs (cores × sockets × threads); at most %d are allowed", total, MaxVCPUs)))
	}
	if cpu.MaxSockets > 0 && cpu.Sockets > cpu.MaxSockets {
		errs = append(errs, field.Invalid(path.Child("maxSockets"), cpu.MaxSockets,
			fmt.Sprintf("must be greater than or equal to %s", path.Child("sockets"))))
	}
	errs = append(errs, ValidateCPUFeatures(cpu.Features, path.Child("features"))...)
	return errs
}

// validateMachine accepts an empty machine type (defaulted to q35) or a known x86 type.
func validateMachine(machine *kubevirtv1.Machine, path *field.Path) field.ErrorList {
	if machine == nil {
		return nil
	}
	return ValidateMachineType(machine.Type, path.Child("type"))
}

// sortedResourceNames returns the names of list in order, so that errors come out in a
// stable order.
func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// contains reports whether list holds v.
func contains[T comparable](list []T, v T) bool {
	for _, item := range list {
		if item == v {
			return true
		}
	}
	return false
}
