package instancetype

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// cpuConflicts lists the template's CPU settings that the instance type also gives, in KubeVirt's
// order (pkg/instancetype/apply/cpu.go, validateCPU). The vCPU count comes from the instance type
// alone, so any topology or CPU resource in the template conflicts; the other settings conflict
// only when the instance type sets them too. maxSockets never conflicts: KubeVirt lets the
// instance type's overwrite the template's.
func cpuConflicts(specPath *field.Path, it *instancetypev1beta1.CPUInstancetype, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	var errs field.ErrorList
	resources := spec.Domain.Resources
	if _, ok := resources.Requests[corev1.ResourceCPU]; ok {
		errs = append(errs, conflict(specPath.Child("domain", "resources", "requests", string(corev1.ResourceCPU))))
	}
	if _, ok := resources.Limits[corev1.ResourceCPU]; ok {
		errs = append(errs, conflict(specPath.Child("domain", "resources", "limits", string(corev1.ResourceCPU))))
	}
	c := spec.Domain.CPU
	if c == nil {
		return errs
	}
	cpuPath := specPath.Child("domain", "cpu")
	if c.Sockets != 0 {
		errs = append(errs, conflict(cpuPath.Child("sockets")))
	}
	if c.Cores != 0 {
		errs = append(errs, conflict(cpuPath.Child("cores")))
	}
	if c.Threads != 0 {
		errs = append(errs, conflict(cpuPath.Child("threads")))
	}
	if c.Model != "" && it.Model != nil {
		errs = append(errs, conflict(cpuPath.Child("model")))
	}
	if c.DedicatedCPUPlacement && it.DedicatedCPUPlacement != nil {
		// KubeVirt names the field dedicatedCPUPlacement here although its JSON name is
		// dedicatedCpuPlacement; the same string keeps clients that match on it working.
		errs = append(errs, conflict(cpuPath.Child("dedicatedCPUPlacement")))
	}
	if c.IsolateEmulatorThread && it.IsolateEmulatorThread != nil {
		errs = append(errs, conflict(cpuPath.Child("isolateEmulatorThread")))
	}
	if c.NUMA != nil && it.NUMA != nil {
		errs = append(errs, conflict(cpuPath.Child("numa")))
	}
	if c.Realtime != nil && it.Realtime != nil {
		errs = append(errs, conflict(cpuPath.Child("realtime")))
	}
	return errs
}

// applyCPU gives the instance the instance type's CPU laid out as topology (computed, and so
// checked, before anything changed). It copies dedicated placement, NUMA, emulator thread
// isolation and realtime as KubeVirt does although NativeVirt's validation refuses them: the
// refusal then names the settings the guest would really get. maxSockets is copied too (KubeVirt's
// bound for CPU hotplug; NativeVirt refuses one above sockets, having no hotplug).
func applyCPU(specPath *field.Path, it *instancetypev1beta1.CPUInstancetype, topo cpuTopology, spec *kubevirtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if errs := cpuConflicts(specPath, it, spec); len(errs) > 0 {
		return errs
	}
	if spec.Domain.CPU == nil {
		spec.Domain.CPU = &kubevirtv1.CPU{}
	}
	c := spec.Domain.CPU
	if it.Model != nil {
		c.Model = *it.Model
	}
	if it.DedicatedCPUPlacement != nil {
		c.DedicatedCPUPlacement = *it.DedicatedCPUPlacement
	}
	if it.IsolateEmulatorThread != nil {
		c.IsolateEmulatorThread = *it.IsolateEmulatorThread
	}
	if it.NUMA != nil {
		c.NUMA = it.NUMA.DeepCopy()
	}
	if it.Realtime != nil {
		c.Realtime = it.Realtime.DeepCopy()
	}
	if it.MaxSockets != nil {
		c.MaxSockets = *it.MaxSockets
	}
	c.Sockets, c.Cores, c.Threads = topo.sockets, topo.cores, topo.threads
	return nil
}
