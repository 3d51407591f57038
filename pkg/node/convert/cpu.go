package convert

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// maxVCPUs is the most vCPUs a guest may have (what validation allows too).
const maxVCPUs = 512

// emulationCPUModel is the model used under TCG when the guest asks for CPU
// features without naming a model: host-model and host-passthrough mean
// nothing without KVM, and libvirt refuses features without a model.
const emulationCPUModel = "qemu64"

// topology is a guest's sockets × cores × threads.
type topology struct {
	sockets, cores, threads uint32
}

// vcpus is the number of vCPUs of the topology.
func (t topology) vcpus() uint32 {
	return t.sockets * t.cores * t.threads
}

// cpuTopology computes the guest's topology. Without cores, sockets and
// threads it gives one socket per CPU of the CPU limit (else the request,
// else one), rounded up, as KubeVirt does; unset parts of a partial
// topology are 1.
func cpuTopology(spec *kubevirtv1.DomainSpec, p *field.Path) (topology, field.ErrorList) {
	var cores, sockets, threads int32
	if spec.CPU != nil {
		cores, sockets, threads = spec.CPU.Cores, spec.CPU.Sockets, spec.CPU.Threads
	}
	var errs field.ErrorList
	for _, part := range []struct {
		name  string
		value int32
	}{{"cores", cores}, {"sockets", sockets}, {"threads", threads}} {
		if part.value < 0 {
			errs = append(errs, field.Invalid(p.Child("cpu", part.name), part.value, "must not be negative"))
		}
	}
	if len(errs) > 0 {
		return topology{}, errs
	}
	if cores == 0 && sockets == 0 && threads == 0 {
		return topology{sockets: cpusFromResources(spec.Resources), cores: 1, threads: 1}, nil
	}
	t := topology{sockets: orOne(sockets), cores: orOne(cores), threads: orOne(threads)}
	if uint64(t.sockets)*uint64(t.cores)*uint64(t.threads) > maxVCPUs {
		return topology{}, field.ErrorList{field.Invalid(p.Child("cpu"), t.sockets*t.cores*t.threads,
			"cores × sockets × threads must not exceed 512")}
	}
	return t, nil
}

// cpusFromResources is the CPU limit, else the CPU request, rounded up to
// whole CPUs, at least 1 and at most maxVCPUs.
func cpusFromResources(r kubevirtv1.ResourceRequirements) uint32 {
	q, ok := r.Limits[corev1.ResourceCPU]
	if !ok {
		q, ok = r.Requests[corev1.ResourceCPU]
	}
	if !ok {
		return 1
	}
	milli := q.MilliValue()
	n := (milli + 999) / 1000
	switch {
	case n < 1:
		return 1
	case n > maxVCPUs:
		return maxVCPUs
	}
	return uint32(n)
}

func orOne(v int32) uint32 {
	if v <= 0 {
		return 1
	}
	return uint32(v)
}

// convertCPU gives the domain's <vcpu> and <cpu>. Under emulation the host
// CPU models are left out (TCG has no host CPU to pass through; QEMU's
// default model is used); a named model is kept.
func convertCPU(spec *kubevirtv1.DomainSpec, emulation bool, p *field.Path) (*VCPU, *CPU, field.ErrorList) {
	t, errs := cpuTopology(spec, p)
	if len(errs) > 0 {
		return nil, nil, errs
	}
	cpu := &CPU{Topology: &CPUTopology{Sockets: t.sockets, Dies: 1, Cores: t.cores, Threads: t.threads}}
	var model string
	var features []kubevirtv1.CPUFeature
	if c := spec.CPU; c != nil {
		model, features = c.Model, c.Features
		errs = append(errs, unsupportedCPU(c, t, p.Child("cpu"))...)
	}
	for i, f := range features {
		fp := p.Child("cpu", "features").Index(i)
		policy := f.Policy
		if policy == "" {
			policy = "require"
		}
		switch policy {
		case "force", "require", "optional", "disable", "forbid":
		default:
			errs = append(errs, field.NotSupported(fp.Child("policy"), f.Policy, []string{"force", "require", "optional", "disable", "forbid"}))
			continue
		}
		if f.Name == "" {
			errs = append(errs, field.Required(fp.Child("name"), "a CPU feature needs a name"))
			continue
		}
		cpu.Features = append(cpu.Features, CPUFeature{Policy: policy, Name: f.Name})
	}
	switch {
	case model == "" || model == kubevirtv1.CPUModeHostModel || model == kubevirtv1.CPUModeHostPassthrough:
		if emulation {
			if len(cpu.Features) > 0 {
				cpu.Mode, cpu.Match = "custom", "exact"
				cpu.Model = &CPUModel{Fallback: "allow", Value: emulationCPUModel}
			}
			break
		}
		cpu.Mode = kubevirtv1.CPUModeHostModel
		if model == kubevirtv1.CPUModeHostPassthrough {
			cpu.Mode = kubevirtv1.CPUModeHostPassthrough
		}
	default:
		cpu.Mode, cpu.Match = "custom", "exact"
		cpu.Model = &CPUModel{Fallback: "allow", Value: model}
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	return &VCPU{Placement: "static", Count: t.vcpus()}, cpu, nil
}

// unsupportedCPU refuses CPU settings the converter does not implement
// (validation refuses them too; this keeps the converter safe on its own).
func unsupportedCPU(c *kubevirtv1.CPU, t topology, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.DedicatedCPUPlacement {
		errs = append(errs, field.Forbidden(p.Child("dedicatedCpuPlacement"), "dedicated CPU placement is not supported"))
	}
	if c.IsolateEmulatorThread {
		errs = append(errs, field.Forbidden(p.Child("isolateEmulatorThread"), "an isolated emulator thread is not supported"))
	}
	if c.NUMA != nil {
		errs = append(errs, field.Forbidden(p.Child("numa"), "guest NUMA topology is not supported"))
	}
	if c.Realtime != nil {
		errs = append(errs, field.Forbidden(p.Child("realtime"), "realtime tuning is not supported"))
	}
	if c.MaxSockets > 0 && uint32(c.MaxSockets) > t.sockets {
		errs = append(errs, field.Forbidden(p.Child("maxSockets"), "CPU hotplug (maxSockets above sockets) is not supported"))
	}
	return errs
}
