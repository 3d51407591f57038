package validation

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// The checks of this file each validate one value that an instance's field takes. They are
// exported for the instancetype.kubevirt.io validation: an instance type or a preference sets
// these fields in the instances made from it (a preferred disk bus becomes a disk's bus), and
// must accept exactly what the instance accepts, so that it never yields an instance that is
// refused. The instance's own validation calls the same functions. An empty value is unset and
// always accepted (a default applies).

// oneOf accepts the zero value (unset) or a value of allowed.
func oneOf[T ~string](value T, allowed []T, path *field.Path) field.ErrorList {
	if value == "" || contains(allowed, value) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, value, allowed)}
}

// ValidateDiskBus checks the bus of a disk (virtio, sata, scsi or usb).
func ValidateDiskBus(bus kubevirtv1.DiskBus, path *field.Path) field.ErrorList {
	return oneOf(bus, diskBuses, path)
}

// ValidateCdromBus checks the bus of a CD-ROM (sata or scsi: QEMU has no virtio CD-ROM).
func ValidateCdromBus(bus kubevirtv1.DiskBus, path *field.Path) field.ErrorList {
	return oneOf(bus, cdromBuses, path)
}

// ValidateDiskCache checks the host cache mode of a disk.
func ValidateDiskCache(cache kubevirtv1.DriverCache, path *field.Path) field.ErrorList {
	return oneOf(cache, cacheModes, path)
}

// ValidateDiskIO checks the host I/O mode of a disk.
func ValidateDiskIO(io kubevirtv1.DriverIO, path *field.Path) field.ErrorList {
	return oneOf(io, ioModes, path)
}

// ValidateInputBus checks the bus of an input device.
func ValidateInputBus(bus kubevirtv1.InputBus, path *field.Path) field.ErrorList {
	return oneOf(bus, inputBuses, path)
}

// ValidateInputType checks the type of an input device.
func ValidateInputType(typ kubevirtv1.InputType, path *field.Path) field.ErrorList {
	return oneOf(typ, inputTypes, path)
}

// ValidateInterfaceModel checks the model of a network interface.
func ValidateInterfaceModel(model string, path *field.Path) field.ErrorList {
	return oneOf(model, interfaceModels, path)
}

// ValidateSoundModel checks the model of the sound device.
func ValidateSoundModel(model string, path *field.Path) field.ErrorList {
	return oneOf(model, soundModels, path)
}

// ValidatePanicDeviceModel checks the model of a panic device.
func ValidatePanicDeviceModel(model kubevirtv1.PanicDeviceModel, path *field.Path) field.ErrorList {
	return oneOf(model, panicModels, path)
}

// ValidateMachineType accepts an empty machine type (defaulted to q35) or a known x86 type.
func ValidateMachineType(machineType string, path *field.Path) field.ErrorList {
	if machineType == "" || machineTypePattern.MatchString(machineType) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, machineType, []string{"q35", "pc", "pc-q35-*", "pc-i440fx-*"})}
}

// ValidateGuestMemory checks an amount of guest memory: not negative, not zero, at least the
// least QEMU boots with.
func ValidateGuestMemory(q resource.Quantity, path *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be greater than or equal to 0")}
	}
	return validateMemoryAmount(q, path)
}

// ValidateCPUFeatures requires every CPU feature to be named and its policy, if any, to be one
// libvirt knows.
func ValidateCPUFeatures(features []kubevirtv1.CPUFeature, path *field.Path) field.ErrorList {
	policies := []string{"force", "require", "optional", "disable", "forbid"}
	var errs field.ErrorList
	for i, feature := range features {
		featurePath := path.Index(i)
		if feature.Name == "" {
			errs = append(errs, field.Required(featurePath.Child("name"), ""))
		}
		errs = append(errs, oneOf(feature.Policy, policies, featurePath.Child("policy"))...)
	}
	return errs
}

// ValidateIOThreads checks the I/O thread policy (path.ioThreadsPolicy) and the size of a
// supplemental pool (path.ioThreads.supplementalPoolThreadCount).
func ValidateIOThreads(policy *kubevirtv1.IOThreadsPolicy, threads *kubevirtv1.DiskIOThreads, path *field.Path) field.ErrorList {
	if policy == nil {
		return nil
	}
	policies := []kubevirtv1.IOThreadsPolicy{kubevirtv1.IOThreadsPolicyShared, kubevirtv1.IOThreadsPolicyAuto,
		kubevirtv1.IOThreadsPolicySupplementalPool}
	if !contains(policies, *policy) {
		return field.ErrorList{field.NotSupported(path.Child("ioThreadsPolicy"), string(*policy), policies)}
	}
	if *policy == kubevirtv1.IOThreadsPolicySupplementalPool {
		countPath := path.Child("ioThreads", "supplementalPoolThreadCount")
		if threads == nil || threads.SupplementalPoolThreadCount == nil {
			return field.ErrorList{field.Required(countPath, "required by ioThreadsPolicy supplementalPool")}
		}
		if n := *threads.SupplementalPoolThreadCount; n < 1 {
			return field.ErrorList{field.Invalid(countPath, n, "must be greater than 0")}
		}
	}
	return nil
}

// ValidateOptionalDNSLabel accepts an empty value or a DNS-1123 label (a host name or
// subdomain of the guest).
func ValidateOptionalDNSLabel(value string, path *field.Path) field.ErrorList {
	return validateOptionalDNSLabel(value, path)
}
