package validation

import (
	"fmt"
	"slices"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtvalidation "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/validation"
)

// ValidateVirtualMachinePreference validates a new namespaced preference.
func ValidateVirtualMachinePreference(p *v1beta1.VirtualMachinePreference) field.ErrorList {
	if p == nil {
		return required()
	}
	return validatePreference(p.Name, &p.Spec)
}

// ValidateVirtualMachinePreferenceUpdate validates a changed namespaced preference: the new
// object must be valid; its spec may differ from the old one.
func ValidateVirtualMachinePreferenceUpdate(newP, oldP *v1beta1.VirtualMachinePreference) field.ErrorList {
	if oldP == nil {
		return required()
	}
	return ValidateVirtualMachinePreference(newP)
}

// ValidateVirtualMachineClusterPreference validates a new cluster-wide preference.
func ValidateVirtualMachineClusterPreference(p *v1beta1.VirtualMachineClusterPreference) field.ErrorList {
	if p == nil {
		return required()
	}
	return validatePreference(p.Name, &p.Spec)
}

// ValidateVirtualMachineClusterPreferenceUpdate validates a changed cluster-wide preference.
func ValidateVirtualMachineClusterPreferenceUpdate(newP, oldP *v1beta1.VirtualMachineClusterPreference) field.ErrorList {
	if oldP == nil {
		return required()
	}
	return ValidateVirtualMachineClusterPreference(newP)
}

// validatePreference validates the name and spec that both kinds of preference have.
func validatePreference(name string, spec *v1beta1.VirtualMachinePreferenceSpec) field.ErrorList {
	return append(validateName(name), ValidatePreferenceSpec(spec, field.NewPath("spec"))...)
}

// ValidatePreferenceSpec validates a preference spec found at path. Every part is optional.
func ValidatePreferenceSpec(spec *v1beta1.VirtualMachinePreferenceSpec, path *field.Path) field.ErrorList {
	if spec == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	errs = append(errs, kubevirtvalidation.CheckUnsupportedPreferenceSpec(spec, path)...)
	errs = append(errs, validateCPUPreferences(spec, path)...)
	errs = append(errs, validateDevicePreferences(spec.Devices, path.Child("devices"))...)
	if spec.Machine != nil {
		errs = append(errs, kubevirtvalidation.ValidateMachineType(spec.Machine.PreferredMachineType,
			path.Child("machine", "preferredMachineType"))...)
	}
	if spec.PreferredSubdomain != nil {
		errs = append(errs, kubevirtvalidation.ValidateOptionalDNSLabel(*spec.PreferredSubdomain, path.Child("preferredSubdomain"))...)
	}
	if g := spec.PreferredTerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(path.Child("preferredTerminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	errs = append(errs, validateRequirements(spec.Requirements, path.Child("requirements"))...)
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(spec.Annotations, path.Child("annotations"))...)
	return errs
}

var (
	// topologies are the preferred CPU topologies, the deprecated names of older releases included.
	topologies = []v1beta1.PreferredCPUTopology{
		v1beta1.Sockets, v1beta1.Cores, v1beta1.Threads, v1beta1.Spread, v1beta1.Any,
		v1beta1.DeprecatedPreferSockets, v1beta1.DeprecatedPreferCores, v1beta1.DeprecatedPreferThreads,
		v1beta1.DeprecatedPreferSpread, v1beta1.DeprecatedPreferAny,
	}
	spreadLevels = []v1beta1.SpreadAcross{
		v1beta1.SpreadAcrossSocketsCoresThreads, v1beta1.SpreadAcrossSocketsCores, v1beta1.SpreadAcrossCoresThreads,
	}
)

// Defaults of the spread topology, as KubeVirt applies them.
const (
	defaultSpreadRatio  = 2
	defaultSpreadAcross = v1beta1.SpreadAcrossSocketsCores
)

// validateCPUPreferences checks the topology and its spread options, the deprecated spread ratio
// and the preferred CPU features (which the instance's CPU features take).
func validateCPUPreferences(spec *v1beta1.VirtualMachinePreferenceSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r := spec.PreferSpreadSocketToCoreRatio; r < 0 {
		errs = append(errs, field.Invalid(path.Child("preferSpreadSocketToCoreRatio"), r, "must be greater than or equal to 0"))
	}
	cpu := spec.CPU
	if cpu == nil {
		return errs
	}
	cpuPath := path.Child("cpu")
	if t := cpu.PreferredCPUTopology; t != nil && !slices.Contains(topologies, *t) {
		errs = append(errs, field.NotSupported(cpuPath.Child("preferredCPUTopology"), *t, topologies))
	}
	if opts := cpu.SpreadOptions; opts != nil {
		optsPath := cpuPath.Child("spreadOptions")
		if opts.Across != nil && !slices.Contains(spreadLevels, *opts.Across) {
			errs = append(errs, field.NotSupported(optsPath.Child("across"), *opts.Across, spreadLevels))
		}
		if opts.Ratio != nil && *opts.Ratio < 1 {
			errs = append(errs, field.Invalid(optsPath.Child("ratio"), *opts.Ratio, "must be greater than or equal to 1"))
		}
	}
	errs = append(errs, validateCoresThreadsRatio(spec, cpuPath)...)
	errs = append(errs, kubevirtvalidation.ValidateCPUFeatures(cpu.PreferredCPUFeatures, cpuPath.Child("preferredCPUFeatures"))...)
	return errs
}

// validateCoresThreadsRatio: spreading over cores and threads gives each core two threads, the
// only ratio KubeVirt lays out that way; it refuses another ratio when the topology is spread.
func validateCoresThreadsRatio(spec *v1beta1.VirtualMachinePreferenceSpec, cpuPath *field.Path) field.ErrorList {
	t := spec.CPU.PreferredCPUTopology
	if t == nil || (*t != v1beta1.Spread && *t != v1beta1.DeprecatedPreferSpread) {
		return nil
	}
	ratio, across := spreadOptions(spec)
	if across != v1beta1.SpreadAcrossCoresThreads || ratio == defaultSpreadRatio {
		return nil
	}
	return field.ErrorList{field.Invalid(cpuPath.Child("spreadOptions", "ratio"), ratio,
		fmt.Sprintf("only a ratio of %d (1 core, 2 threads) is allowed when spreading vCPUs across %s",
			defaultSpreadRatio, v1beta1.SpreadAcrossCoresThreads))}
}

// spreadOptions returns the ratio and levels the spread topology uses: spreadOptions, else the
// deprecated preferSpreadSocketToCoreRatio, else the defaults.
func spreadOptions(spec *v1beta1.VirtualMachinePreferenceSpec) (int32, v1beta1.SpreadAcross) {
	ratio, across := int32(defaultSpreadRatio), defaultSpreadAcross
	if spec.PreferSpreadSocketToCoreRatio != 0 {
		ratio = spec.PreferSpreadSocketToCoreRatio
	}
	if spec.CPU != nil && spec.CPU.SpreadOptions != nil {
		if opts := spec.CPU.SpreadOptions; opts.Ratio != nil {
			ratio = *opts.Ratio
		}
		if opts := spec.CPU.SpreadOptions; opts.Across != nil {
			across = *opts.Across
		}
	}
	return ratio, across
}

// validateRequirements checks the least vCPU count and memory the preference needs.
func validateRequirements(req *v1beta1.PreferenceRequirements, path *field.Path) field.ErrorList {
	if req == nil {
		return nil
	}
	var errs field.ErrorList
	if req.CPU != nil {
		guestPath := path.Child("cpu", "guest")
		switch {
		case req.CPU.Guest == 0:
			errs = append(errs, field.Required(guestPath, "the least number of vCPUs (at least 1)"))
		case req.CPU.Guest < 0:
			errs = append(errs, field.Invalid(guestPath, req.CPU.Guest, "must be greater than or equal to 1"))
		}
	}
	if req.Memory != nil {
		guestPath := path.Child("memory", "guest")
		switch req.Memory.Guest.Sign() {
		case 0:
			errs = append(errs, field.Required(guestPath, "the least guest memory (more than 0)"))
		case -1:
			errs = append(errs, field.Invalid(guestPath, req.Memory.Guest.String(), "must be greater than 0"))
		}
	}
	return errs
}

// WarningsForPreferenceSpec returns KubeVirt's warning for a deprecated topology name, which is
// still accepted.
func WarningsForPreferenceSpec(spec *v1beta1.VirtualMachinePreferenceSpec) []string {
	if spec == nil || spec.CPU == nil || spec.CPU.PreferredCPUTopology == nil {
		return nil
	}
	renamed := map[v1beta1.PreferredCPUTopology]v1beta1.PreferredCPUTopology{
		v1beta1.DeprecatedPreferSockets: v1beta1.Sockets,
		v1beta1.DeprecatedPreferCores:   v1beta1.Cores,
		v1beta1.DeprecatedPreferThreads: v1beta1.Threads,
		v1beta1.DeprecatedPreferSpread:  v1beta1.Spread,
		v1beta1.DeprecatedPreferAny:     v1beta1.Any,
	}
	t := *spec.CPU.PreferredCPUTopology
	if now, ok := renamed[t]; ok {
		return []string{fmt.Sprintf("PreferredCPUTopology %s is deprecated for removal in a future release, please use %s instead", t, now)}
	}
	return nil
}
