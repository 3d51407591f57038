package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

var (
	evictionStrategies = []kubevirtv1.EvictionStrategy{kubevirtv1.EvictionStrategyNone, kubevirtv1.EvictionStrategyLiveMigrate,
		kubevirtv1.EvictionStrategyLiveMigrateIfPossible, kubevirtv1.EvictionStrategyExternal}
	startStrategies = []kubevirtv1.StartStrategy{kubevirtv1.StartStrategyPaused}
	// supportedArchitectures are the guest architectures NativeVirt runs; empty means the node's.
	supportedArchitectures = []string{"amd64"}
)

// ValidateVirtualMachineInstance validates a new VirtualMachineInstance: its name (a DNS-1123
// label, as it becomes the guest's host name), its annotations and its spec.
func ValidateVirtualMachineInstance(vmi *kubevirtv1.VirtualMachineInstance) field.ErrorList {
	if vmi == nil {
		return field.ErrorList{field.Required(field.NewPath("metadata"), "a VirtualMachineInstance is required")}
	}
	var errs field.ErrorList
	errs = append(errs, validateObjectName(vmi.Name, field.NewPath("metadata", "name"))...)
	errs = append(errs, checkAnnotations(vmi.Annotations, field.NewPath("metadata", "annotations"))...)
	errs = append(errs, ValidateVMISpec(&vmi.Spec, field.NewPath("spec"))...)
	return errs
}

// ValidateVMISpec validates a VirtualMachineInstance spec found at fldPath: spec for an
// instance, spec.template.spec for a VirtualMachine or replica set. It is exported for the
// lifecycle subresources, which check a spec before acting on it.
func ValidateVMISpec(spec *kubevirtv1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	if spec == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var errs field.ErrorList
	errs = append(errs, check(unsupportedVMISpecFields, spec, fldPath)...)
	domainPath := fldPath.Child("domain")
	errs = append(errs, validateDomain(&spec.Domain, domainPath)...)
	volumeErrs, volumes := validateVolumes(spec.Volumes, fldPath.Child("volumes"))
	errs = append(errs, volumeErrs...)
	devicesPath := domainPath.Child("devices")
	errs = append(errs, validateDisks(spec.Domain.Devices.Disks, volumes, devicesPath.Child("disks"))...)
	errs = append(errs, validateBootOrder(&spec.Domain.Devices, devicesPath)...)
	errs = append(errs, validateNetworking(spec, fldPath)...)
	errs = append(errs, validateScheduling(spec, fldPath)...)
	errs = append(errs, validateGuestIdentity(spec, fldPath)...)
	errs = append(errs, validateProbes(spec, fldPath)...)
	errs = append(errs, validateAccessCredentials(spec, fldPath)...)
	errs = append(errs, validateACPI(spec, fldPath)...)
	errs = append(errs, validateHotplugVolumes(spec, fldPath)...)
	return errs
}

// validateGuestIdentity checks the top-level spec fields that are not hardware, volumes,
// networks or scheduling: host name, shutdown grace, eviction, start and architecture.
func validateGuestIdentity(spec *kubevirtv1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateOptionalDNSLabel(spec.Hostname, fldPath.Child("hostname"))...)
	errs = append(errs, validateOptionalDNSLabel(spec.Subdomain, fldPath.Child("subdomain"))...)
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	if e := spec.EvictionStrategy; e != nil && !contains(evictionStrategies, *e) {
		errs = append(errs, field.NotSupported(fldPath.Child("evictionStrategy"), string(*e), evictionStrategies))
	}
	if s := spec.StartStrategy; s != nil && !contains(startStrategies, *s) {
		errs = append(errs, field.NotSupported(fldPath.Child("startStrategy"), string(*s), startStrategies))
	}
	if a := spec.Architecture; a != "" && !contains(supportedArchitectures, a) {
		errs = append(errs, field.NotSupported(fldPath.Child("architecture"), a, supportedArchitectures))
	}
	return errs
}

// ValidateVirtualMachineInstanceUpdate refuses any change of the spec but hotpluggable volumes
// (with their disks) coming and going: the guest was built from the rest. Metadata may change.
func ValidateVirtualMachineInstanceUpdate(newVMI, oldVMI *kubevirtv1.VirtualMachineInstance) field.ErrorList {
	if newVMI == nil || oldVMI == nil {
		return field.ErrorList{field.Required(field.NewPath("metadata"), "a VirtualMachineInstance is required")}
	}
	return validateHotplugUpdate(&newVMI.Spec, &oldVMI.Spec, field.NewPath("spec"))
}
