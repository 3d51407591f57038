package instancetype

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
)

// deprecatedTopologies maps the prefer* names of older releases to the names that replaced them;
// KubeVirt treats each pair alike (pkg/instancetype/apply/cpu.go).
var deprecatedTopologies = map[instancetypev1beta1.PreferredCPUTopology]instancetypev1beta1.PreferredCPUTopology{
	instancetypev1beta1.DeprecatedPreferSockets: instancetypev1beta1.Sockets,
	instancetypev1beta1.DeprecatedPreferCores:   instancetypev1beta1.Cores,
	instancetypev1beta1.DeprecatedPreferThreads: instancetypev1beta1.Threads,
	instancetypev1beta1.DeprecatedPreferSpread:  instancetypev1beta1.Spread,
	instancetypev1beta1.DeprecatedPreferAny:     instancetypev1beta1.Any,
}

// supportedTopologies are the topologies a preference may name (besides the deprecated ones).
var supportedTopologies = []instancetypev1beta1.PreferredCPUTopology{
	instancetypev1beta1.Sockets, instancetypev1beta1.Cores, instancetypev1beta1.Threads,
	instancetypev1beta1.Spread, instancetypev1beta1.Any,
}

// supportedSpreadAcross are the levels a spread topology may spread over.
var supportedSpreadAcross = []instancetypev1beta1.SpreadAcross{
	instancetypev1beta1.SpreadAcrossSocketsCores, instancetypev1beta1.SpreadAcrossCoresThreads,
	instancetypev1beta1.SpreadAcrossSocketsCoresThreads,
}

const (
	// defaultSpreadRatio is the spread ratio without one in the preference (KubeVirt's
	// pkg/instancetype/preference/apply/cpu.go).
	defaultSpreadRatio int32 = 2
	// spreadThreadsPerCore is the threads per core of a spread across sockets, cores and threads:
	// KubeVirt fixes it at 2.
	spreadThreadsPerCore int32 = 2
)

// KubeVirt's messages for an instance type whose vCPUs a spread cannot divide
// (pkg/instancetype/preference/validation/cpu.go).
const (
	spreadAcrossSocketsCoresErrFmt = "%d vCPUs provided by the instance type are not divisible by the " +
		"Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of %d provided by the preference"
	spreadAcrossCoresThreadsErrFmt        = "%d vCPUs provided by the instance type are not divisible by the number of threads per core %d"
	spreadAcrossSocketsCoresThreadsErrFmt = "%d vCPUs provided by the instance type are not divisible by the number of threads per core " +
		"%d and Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of %d"
)

// PreferredTopology returns the CPU topology a preference asks for, with a deprecated prefer*
// name replaced by its successor. Without a preference or a topology in it, it is sockets, as in
// KubeVirt.
func PreferredTopology(pref *instancetypev1beta1.VirtualMachinePreferenceSpec) instancetypev1beta1.PreferredCPUTopology {
	topology := instancetypev1beta1.Sockets
	if pref != nil && pref.CPU != nil && pref.CPU.PreferredCPUTopology != nil {
		topology = *pref.CPU.PreferredCPUTopology
	}
	if current, ok := deprecatedTopologies[topology]; ok {
		return current
	}
	return topology
}

// SpreadOptions returns the ratio and levels of a spread topology: spreadOptions.ratio, else the
// deprecated preferSpreadSocketToCoreRatio, else 2; spreadOptions.across, else SocketsCores.
func SpreadOptions(pref *instancetypev1beta1.VirtualMachinePreferenceSpec) (ratio int32, across instancetypev1beta1.SpreadAcross) {
	ratio, across, _ = spreadOptions(pref)
	return ratio, across
}

// spreadOptions is SpreadOptions, also returning where the ratio came from so that a bad ratio
// is reported at the preference's field that holds it.
func spreadOptions(pref *instancetypev1beta1.VirtualMachinePreferenceSpec) (int32, instancetypev1beta1.SpreadAcross, *field.Path) {
	ratio, ratioPath := defaultSpreadRatio, (*field.Path)(nil)
	across := instancetypev1beta1.SpreadAcrossSocketsCores
	if pref == nil {
		return ratio, across, ratioPath
	}
	if pref.PreferSpreadSocketToCoreRatio != 0 {
		ratio, ratioPath = pref.PreferSpreadSocketToCoreRatio, field.NewPath("preference", "spec", "preferSpreadSocketToCoreRatio")
	}
	if pref.CPU != nil && pref.CPU.SpreadOptions != nil {
		if o := pref.CPU.SpreadOptions; o.Across != nil {
			across = *o.Across
		}
		if o := pref.CPU.SpreadOptions; o.Ratio != nil {
			ratio, ratioPath = *o.Ratio, preferenceCPUPath.Child("spreadOptions", "ratio")
		}
	}
	return ratio, across, ratioPath
}

// cpuTopology is a guest's sockets × cores × threads.
type cpuTopology struct {
	sockets, cores, threads int32
}

// Topology lays an instance type's guest vCPUs out as the preference (which may be nil) asks:
// all as sockets (the default, and for any), as cores or as threads of one socket, or spread:
// across SocketsCores, ratio cores per socket; across CoresThreads, ratio threads per core; across
// SocketsCoresThreads, 2 threads per core and ratio cores per socket. One vCPU is always one
// socket of one core of one thread. A count a spread cannot divide is an error, as KubeVirt's VM
// admission rejects it rather than give the guest fewer vCPUs; so is an unknown topology or
// level, or a ratio below 1. A non-nil err is a *field.Error naming the instance type's or the
// preference's field.
func Topology(guest int32, pref *instancetypev1beta1.VirtualMachinePreferenceSpec) (sockets, cores, threads int32, err error) {
	t, ferr := topology(guest, pref)
	if ferr != nil {
		return 0, 0, 0, ferr
	}
	return t.sockets, t.cores, t.threads, nil
}

// topology is Topology with a typed error, so that callers never hold a nil *field.Error in a
// non-nil error.
func topology(guest int32, pref *instancetypev1beta1.VirtualMachinePreferenceSpec) (cpuTopology, *field.Error) {
	if guest < 1 {
		return cpuTopology{}, field.Invalid(instancetypeCPUGuestPath, guest, "must be at least 1")
	}
	one := cpuTopology{sockets: 1, cores: 1, threads: 1}
	switch PreferredTopology(pref) {
	case instancetypev1beta1.Sockets, instancetypev1beta1.Any:
		// With an instance type the template may not set a topology of its own, so any has
		// nothing to keep and lays the vCPUs out as sockets.
		one.sockets = guest
	case instancetypev1beta1.Cores:
		one.cores = guest
	case instancetypev1beta1.Threads:
		one.threads = guest
	case instancetypev1beta1.Spread:
		return spreadTopology(guest, pref)
	default:
		return cpuTopology{}, field.NotSupported(preferenceCPUPath.Child("preferredCPUTopology"),
			PreferredTopology(pref), supportedTopologies)
	}
	return one, nil
}

// spreadTopology spreads guest vCPUs as KubeVirt's applyGuestCPUTopology does, after the
// divisibility check its VM admission makes first (CheckSpreadCPUTopology). The check comes
// before KubeVirt's one-vCPU shortcut, so one vCPU with a ratio of 2 is refused; one vCPU that
// passes it (ratio 1) is laid out as one socket, core and thread by the arithmetic below.
func spreadTopology(guest int32, pref *instancetypev1beta1.VirtualMachinePreferenceSpec) (cpuTopology, *field.Error) {
	ratio, across, ratioPath := spreadOptions(pref)
	if ratio < 1 {
		// KubeVirt divides by the ratio unchecked; refuse it instead of dividing by zero.
		if ratioPath == nil {
			ratioPath = preferenceCPUPath.Child("spreadOptions", "ratio")
		}
		return cpuTopology{}, field.Invalid(ratioPath, ratio, "must be at least 1")
	}
	var t cpuTopology
	switch across {
	case instancetypev1beta1.SpreadAcrossSocketsCores:
		if guest%ratio != 0 {
			return cpuTopology{}, field.Invalid(instancetypeCPUGuestPath, guest, fmt.Sprintf(spreadAcrossSocketsCoresErrFmt, guest, ratio))
		}
		t = cpuTopology{sockets: guest / ratio, cores: ratio, threads: 1}
	case instancetypev1beta1.SpreadAcrossCoresThreads:
		if guest%ratio != 0 {
			return cpuTopology{}, field.Invalid(instancetypeCPUGuestPath, guest, fmt.Sprintf(spreadAcrossCoresThreadsErrFmt, guest, ratio))
		}
		t = cpuTopology{sockets: 1, cores: guest / ratio, threads: ratio}
	case instancetypev1beta1.SpreadAcrossSocketsCoresThreads:
		if guest%spreadThreadsPerCore != 0 || (guest/spreadThreadsPerCore)%ratio != 0 {
			return cpuTopology{}, field.Invalid(instancetypeCPUGuestPath, guest,
				fmt.Sprintf(spreadAcrossSocketsCoresThreadsErrFmt, guest, spreadThreadsPerCore, ratio))
		}
		t = cpuTopology{sockets: guest / spreadThreadsPerCore / ratio, cores: ratio, threads: spreadThreadsPerCore}
	default:
		return cpuTopology{}, field.NotSupported(preferenceCPUPath.Child("spreadOptions", "across"), across, supportedSpreadAcross)
	}
	return t, nil
}
