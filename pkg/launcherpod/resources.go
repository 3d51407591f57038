package launcherpod

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

const (
	// baseOverhead is what libvirt, QEMU and the launcher need besides guest memory.
	baseOverhead int64 = 256 << 20
	// overheadPercent of guest memory covers page tables and device emulation growing with it.
	overheadPercent int64 = 2
	mebibyte        int64 = 1 << 20
)

// DefaultCPUAllocationRatio is KubeVirt's default cpuAllocationRatio: a launcher pod whose
// domain names no CPU request or limit requests 1/10 of a CPU per vCPU (100m for one vCPU).
const DefaultCPUAllocationRatio = 10

// VCPUs is the guest's vCPU count as KubeVirt counts it (hardware.GetNumberOfVCPUs): sockets ×
// cores × threads, each 1 when unset, and 1 without a CPU section.
func VCPUs(cpu *kubevirtv1.CPU) int64 {
	if cpu == nil {
		return 1
	}
	n := int64(1)
	for _, v := range []int32{cpu.Sockets, cpu.Cores, cpu.Threads} {
		if v > 0 {
			n *= int64(v)
		}
	}
	return n
}

// defaultCPURequest is the compute container's CPU request when the domain names none, as
// KubeVirt's WithoutDedicatedCPU computes it: vCPUs / ratio CPUs (DefaultCPUAllocationRatio when
// ratio < 1). KubeVirt parses the float quotient, which the scheduler reads in whole millicores
// rounded up; this rounds up to whole millicores directly (1 vCPU at ratio 3: 334m).
func defaultCPURequest(cpu *kubevirtv1.CPU, ratio int) resource.Quantity {
	if ratio < 1 {
		ratio = DefaultCPUAllocationRatio
	}
	milli := (VCPUs(cpu)*1000 + int64(ratio) - 1) / int64(ratio)
	return *resource.NewMilliQuantity(milli, resource.DecimalSI)
}

// errNoMemory is returned for an instance without any memory size; validation refuses those,
// so it only guards against objects that bypassed it.
var errNoMemory = errors.New("the instance sets no memory (domain.memory.guest or domain.resources.requests.memory)")

// GuestMemory is the memory the guest sees: memory.guest, else the memory request, else the
// memory limit (a limit alone is also the request, as for pods).
func GuestMemory(spec *kubevirtv1.VirtualMachineInstanceSpec) (resource.Quantity, error) {
	if m := spec.Domain.Memory; m != nil && m.Guest != nil && !m.Guest.IsZero() {
		return m.Guest.DeepCopy(), nil
	}
	if q, ok := spec.Domain.Resources.Requests[corev1.ResourceMemory]; ok && !q.IsZero() {
		return q.DeepCopy(), nil
	}
	if q, ok := spec.Domain.Resources.Limits[corev1.ResourceMemory]; ok && !q.IsZero() {
		return q.DeepCopy(), nil
	}
	return resource.Quantity{}, errNoMemory
}

// Overhead is the memory the launcher pod needs on top of the guest's: 256Mi plus 2% of guest
// memory, rounded up to whole MiB. It is the one formula for the overhead; change it here only.
func Overhead(guest resource.Quantity) resource.Quantity {
	percent := (guest.Value()*overheadPercent + 99) / 100
	percent = (percent + mebibyte - 1) / mebibyte * mebibyte
	return *resource.NewQuantity(baseOverhead+percent, resource.BinarySI)
}

// computeResources sizes the compute container from the domain: memory request = guest +
// overhead (guest alone with overcommitGuestOverhead), memory limit = limit + overhead when the
// domain sets one, CPU copied (vCPUs / cpuAllocationRatio when unset, see defaultCPURequest), one
// KVM device unless emulating, and one TUN device when an interface is on the pod network.
func computeResources(spec *kubevirtv1.VirtualMachineInstanceSpec, useEmulation bool, cpuAllocationRatio int) (corev1.ResourceRequirements, error) {
	guest, err := GuestMemory(spec)
	if err != nil {
		return corev1.ResourceRequirements{}, err
	}
	overhead := Overhead(guest)
	domain := spec.Domain.Resources
	out := corev1.ResourceRequirements{Requests: corev1.ResourceList{}}

	memRequest := guest.DeepCopy()
	if !domain.OvercommitGuestOverhead {
		memRequest.Add(overhead)
	}
	out.Requests[corev1.ResourceMemory] = memRequest

	if limit, ok := domain.Limits[corev1.ResourceMemory]; ok && !limit.IsZero() {
		memLimit := limit.DeepCopy()
		memLimit.Add(overhead)
		// A pod whose request exceeds its limit is invalid; the limit never drops below it.
		if memLimit.Cmp(memRequest) < 0 {
			memLimit = memRequest.DeepCopy()
		}
		setLimit(&out, corev1.ResourceMemory, memLimit)
	}

	cpuRequest := defaultCPURequest(spec.Domain.CPU, cpuAllocationRatio)
	if q, ok := domain.Requests[corev1.ResourceCPU]; ok && !q.IsZero() {
		cpuRequest = q.DeepCopy()
	} else if q, ok := domain.Limits[corev1.ResourceCPU]; ok && !q.IsZero() {
		cpuRequest = q.DeepCopy()
	}
	out.Requests[corev1.ResourceCPU] = cpuRequest
	if q, ok := domain.Limits[corev1.ResourceCPU]; ok && !q.IsZero() {
		setLimit(&out, corev1.ResourceCPU, q.DeepCopy())
	}

	one := *resource.NewQuantity(1, resource.DecimalSI)
	if !useEmulation {
		out.Requests[KVMResource] = one
		setLimit(&out, KVMResource, one.DeepCopy())
	}
	if usesPodNetwork(spec) {
		out.Requests[TUNResource] = one.DeepCopy()
		setLimit(&out, TUNResource, one.DeepCopy())
	}
	return out, nil
}

// usesPodNetwork reports whether an interface of the instance is on the pod network.
func usesPodNetwork(spec *kubevirtv1.VirtualMachineInstanceSpec) bool {
	pod := map[string]bool{}
	for _, n := range spec.Networks {
		if n.Pod != nil {
			pod[n.Name] = true
		}
	}
	for _, iface := range spec.Domain.Devices.Interfaces {
		if pod[iface.Name] {
			return true
		}
	}
	return false
}

func setLimit(r *corev1.ResourceRequirements, name corev1.ResourceName, q resource.Quantity) {
	if r.Limits == nil {
		r.Limits = corev1.ResourceList{}
	}
	r.Limits[name] = q
}
