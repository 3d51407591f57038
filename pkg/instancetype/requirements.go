package instancetype

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// KubeVirt's messages for unmet requirements (pkg/instancetype/preference/requirements).
const (
	insufficientInstancetypeCPUFmt    = "insufficient CPU resources of %d vCPU provided by instance type, preference requires %d vCPU"
	insufficientVMCPUFmt              = "insufficient CPU resources of %d vCPU provided by VirtualMachine, preference requires %d vCPU provided as %s"
	insufficientInstancetypeMemoryFmt = "insufficient Memory resources of %s provided by instance type, preference requires %s"
	insufficientVMMemoryFmt           = "insufficient Memory resources of %s provided by VirtualMachine, preference requires %s"
	requiredArchitectureNotUsedFmt    = "preference requires architecture %s but %s is being requested"
)

// defaultArchitecture is the architecture of a spec that names none. KubeVirt checks the
// requirements after defaulting the architecture to the cluster's; NativeVirt runs amd64 guests
// only, so an empty architecture is amd64.
const defaultArchitecture = "amd64"

// CheckRequirements checks a preference's requirements (which may be absent) against the
// instance type or, without one, against the instance spec itself, as KubeVirt's VM admission
// does once the spec is expanded (pkg/instancetype/preference/requirements). fldPath is the
// template's path as for Apply: a shortfall of the instance type is reported at the sibling
// spec.instancetype, one of the VirtualMachine at the template's field. Every unmet requirement
// is reported (KubeVirt stops at the first), each as field.ErrorTypeNotFound.
//
// The VirtualMachine's values are the ones its guest gets, since KubeVirt checks them after
// defaulting: vCPUs from the topology with unset parts counting 1, or, without any topology, one
// socket per CPU of the CPU limit or request (the node side's rule); memory from memory.guest,
// else the memory request, else the limit, else the huge page size; the architecture, else amd64.
// Which vCPUs count follows the preferred topology: sockets, cores or threads alone for those
// topologies (a VM with 1 socket of 4 cores does not meet a requirement of 2 under sockets), the
// spread's levels for spread, and all three for any.
func CheckRequirements(fldPath *field.Path, it *instancetypev1beta1.VirtualMachineInstancetypeSpec,
	pref *instancetypev1beta1.VirtualMachinePreferenceSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if pref == nil || pref.Requirements == nil || spec == nil {
		return nil
	}
	specPath, instancetypePath := specPaths(fldPath)
	var errs field.ErrorList
	r := pref.Requirements
	if r.CPU != nil {
		errs = append(errs, checkCPURequirement(specPath, instancetypePath, r.CPU.Guest, it, pref, spec)...)
	}
	if r.Memory != nil {
		errs = append(errs, checkMemoryRequirement(specPath, instancetypePath, r.Memory.Guest, it, spec)...)
	}
	if r.Architecture != nil {
		arch := spec.Architecture
		if arch == "" {
			arch = defaultArchitecture
		}
		if arch != *r.Architecture {
			errs = append(errs, unmet(specPath.Child("architecture"), requiredArchitectureNotUsedFmt, *r.Architecture, arch))
		}
	}
	return errs
}

// specPaths returns the path of the template's spec and of the VirtualMachine's instance type
// matcher, the template's sibling. Without a path they are those of a VirtualMachine.
func specPaths(fldPath *field.Path) (specPath, instancetypePath *field.Path) {
	if fldPath == nil {
		fldPath = field.NewPath("spec", "template")
	}
	return fldPath.Child("spec"), fldPath.Root().Child("instancetype")
}

func checkCPURequirement(specPath, instancetypePath *field.Path, required int32, it *instancetypev1beta1.VirtualMachineInstancetypeSpec,
	pref *instancetypev1beta1.VirtualMachinePreferenceSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if it != nil {
		if it.CPU.Guest < required {
			return field.ErrorList{unmet(instancetypePath, insufficientInstancetypeCPUFmt, it.CPU.Guest, required)}
		}
		return nil
	}
	t := guestTopology(&spec.Domain)
	cpuPath := specPath.Child("domain", "cpu")
	var vcpus int64
	var paths []string
	var providedAs string
	switch PreferredTopology(pref) {
	case instancetypev1beta1.Sockets:
		vcpus, paths, providedAs = int64(t.sockets), []string{"sockets"}, "sockets"
	case instancetypev1beta1.Cores:
		vcpus, paths, providedAs = int64(t.cores), []string{"cores"}, "cores"
	case instancetypev1beta1.Threads:
		vcpus, paths, providedAs = int64(t.threads), []string{"threads"}, "threads"
	case instancetypev1beta1.Any:
		vcpus = int64(t.cores) * int64(t.sockets) * int64(t.threads)
		paths, providedAs = []string{"cores", "sockets", "threads"}, "cores, sockets and threads"
	case instancetypev1beta1.Spread:
		_, across := SpreadOptions(pref)
		switch across {
		case instancetypev1beta1.SpreadAcrossSocketsCores:
			vcpus, paths = int64(t.sockets)*int64(t.cores), []string{"sockets", "cores"}
		case instancetypev1beta1.SpreadAcrossCoresThreads:
			vcpus, paths = int64(t.cores)*int64(t.threads), []string{"cores", "threads"}
		case instancetypev1beta1.SpreadAcrossSocketsCoresThreads:
			vcpus, paths = int64(t.sockets)*int64(t.cores)*int64(t.threads), []string{"sockets", "cores", "threads"}
		default:
			return field.ErrorList{field.NotSupported(preferenceCPUPath.Child("spreadOptions", "across"), across, supportedSpreadAcross)}
		}
		providedAs = string(across)
	default:
		return field.ErrorList{field.NotSupported(preferenceCPUPath.Child("preferredCPUTopology"), PreferredTopology(pref), supportedTopologies)}
	}
	if vcpus >= int64(required) {
		return nil
	}
	errs := make(field.ErrorList, 0, len(paths))
	for _, p := range paths {
		errs = append(errs, unmet(cpuPath.Child(p), insufficientVMCPUFmt, vcpus, required, providedAs))
	}
	return errs
}

// guestTopology is the topology the guest of a spec gets, as NativeVirt's node side computes it
// (pkg/node/convert, which this package may not import): unset parts of a topology count 1;
// without any, one socket per CPU of the CPU limit, else of the request, rounded up, at least 1.
// KubeVirt's defaulting gives the same for a spec without a topology.
func guestTopology(d *kubevirtv1.DomainSpec) cpuTopology {
	var sockets, cores, threads int32
	if d.CPU != nil {
		sockets, cores, threads = d.CPU.Sockets, d.CPU.Cores, d.CPU.Threads
	}
	if sockets == 0 && cores == 0 && threads == 0 {
		return cpuTopology{sockets: cpusFromResources(d.Resources), cores: 1, threads: 1}
	}
	return cpuTopology{sockets: atLeastOne(sockets), cores: atLeastOne(cores), threads: atLeastOne(threads)}
}

func cpusFromResources(r kubevirtv1.ResourceRequirements) int32 {
	q, ok := r.Limits[corev1.ResourceCPU]
	if !ok {
		q, ok = r.Requests[corev1.ResourceCPU]
	}
	if !ok {
		return 1
	}
	n := (q.MilliValue() + 999) / 1000
	switch {
	case n < 1:
		return 1
	case n > 1<<20:
		// Far above any count validation allows; keeps the conversion to int32 exact.
		return 1 << 20
	}
	return int32(n)
}

func atLeastOne(v int32) int32 {
	if v < 1 {
		return 1
	}
	return v
}

func checkMemoryRequirement(specPath, instancetypePath *field.Path, required resource.Quantity,
	it *instancetypev1beta1.VirtualMachineInstancetypeSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if it != nil {
		if it.Memory.Guest.Cmp(required) < 0 {
			return field.ErrorList{unmet(instancetypePath, insufficientInstancetypeMemoryFmt, it.Memory.Guest.String(), required.String())}
		}
		return nil
	}
	guest := guestMemory(&spec.Domain)
	if guest.Cmp(required) < 0 {
		return field.ErrorList{unmet(specPath.Child("domain", "memory"), insufficientVMMemoryFmt, guest.String(), required.String())}
	}
	return nil
}

// guestMemory is the memory the guest of a spec gets, as KubeVirt's defaulting computes it before
// checking requirements (pkg/defaults/defaults.go, setGuestMemory): memory.guest, else the memory
// request, else the limit, else the huge page size; zero without any.
func guestMemory(d *kubevirtv1.DomainSpec) resource.Quantity {
	if d.Memory != nil && d.Memory.Guest != nil {
		return *d.Memory.Guest
	}
	if q, ok := d.Resources.Requests[corev1.ResourceMemory]; ok && !q.IsZero() {
		return q
	}
	if q, ok := d.Resources.Limits[corev1.ResourceMemory]; ok && !q.IsZero() {
		return q
	}
	if d.Memory != nil && d.Memory.Hugepages != nil {
		if q, err := resource.ParseQuantity(d.Memory.Hugepages.PageSize); err == nil {
			return q
		}
	}
	return resource.Quantity{}
}
