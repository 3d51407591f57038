package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestValidateResources(t *testing.T) {
	runSpecCases(t, []specCase{
		{"cpu and memory with limits", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests[corev1.ResourceCPU] = q("500m")
			s.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("256Mi")}
		}, nil},
		{"other request", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests[corev1.ResourceEphemeralStorage] = q("1Gi")
		}, []string{"NotSupported:spec.domain.resources.requests[ephemeral-storage]"}},
		{"other limit", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": q("1")}
		}, []string{"NotSupported:spec.domain.resources.limits[nvidia.com/gpu]"}},
		{"negative cpu", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests[corev1.ResourceCPU] = q("-1")
		}, []string{"Invalid:spec.domain.resources.requests[cpu]"}},
		{"memory limit below request", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: q("64Mi")}
		}, []string{"Invalid:spec.domain.resources.limits[memory]"}},
		{"cpu limit below request", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests[corev1.ResourceCPU] = q("2")
			s.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: q("1")}
		}, []string{"Invalid:spec.domain.resources.limits[cpu]"}},
	})
}

func TestValidateMemory(t *testing.T) {
	runSpecCases(t, []specCase{
		{"no memory at all", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests = nil
		}, []string{"Required:spec.domain.resources.requests[memory]"}},
		{"only a limit", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests = nil
			s.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}
		}, []string{"Required:spec.domain.resources.requests[memory]"}},
		{"guest memory only", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests = nil
			s.Domain.Memory = &kubevirtv1.Memory{Guest: qp("1Gi")}
		}, nil},
		{"zero request", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests[corev1.ResourceMemory] = q("0")
		}, []string{"Invalid:spec.domain.resources.requests[memory]"}},
		{"tiny request", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests[corev1.ResourceMemory] = q("1k")
		}, []string{"Invalid:spec.domain.resources.requests[memory]"}},
		{"negative request", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests[corev1.ResourceMemory] = q("-1Gi")
		}, []string{"Invalid:spec.domain.resources.requests[memory]"}},
		{"zero guest", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Memory = &kubevirtv1.Memory{Guest: qp("0")}
		}, []string{"Invalid:spec.domain.memory.guest"}},
		{"negative guest", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Memory = &kubevirtv1.Memory{Guest: qp("-1Mi")}
		}, []string{"Invalid:spec.domain.memory.guest"}},
		{"guest equal to limit", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}
			s.Domain.Memory = &kubevirtv1.Memory{Guest: qp("1Gi")}
		}, nil},
		{"guest above limit", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}
			s.Domain.Memory = &kubevirtv1.Memory{Guest: qp("2Gi")}
		}, []string{"Invalid:spec.domain.memory.guest"}},
		{"maxGuest below guest", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Memory = &kubevirtv1.Memory{Guest: qp("2Gi"), MaxGuest: qp("1Gi")}
		}, []string{"Invalid:spec.domain.memory.maxGuest"}},
		{"maxGuest above guest", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Memory = &kubevirtv1.Memory{Guest: qp("1Gi"), MaxGuest: qp("4Gi")}
		}, nil},
	})
}

func TestValidateCPU(t *testing.T) {
	topology := func(cores, sockets, threads int32) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		return func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.CPU = &kubevirtv1.CPU{Cores: cores, Sockets: sockets, Threads: threads}
		}
	}
	runSpecCases(t, []specCase{
		{"small topology", topology(2, 1, 2), nil},
		{"exactly 512 vCPUs", topology(8, 8, 8), nil},
		{"only cores", topology(4, 0, 0), nil},
		{"negative cores", topology(-1, 1, 1), []string{"Invalid:spec.domain.cpu.cores"}},
		{"negative sockets", topology(1, -2, 1), []string{"Invalid:spec.domain.cpu.sockets"}},
		{"negative threads", topology(1, 1, -1), []string{"Invalid:spec.domain.cpu.threads"}},
		{"too many vCPUs", topology(8, 8, 16), []string{"Invalid:spec.domain.cpu"}},
		{"int32 overflow of the product", topology(2147483647, 2147483647, 2147483647), []string{"Invalid:spec.domain.cpu"}},
		{"maxSockets below sockets", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.CPU = &kubevirtv1.CPU{Sockets: 4, MaxSockets: 2}
		}, []string{"Invalid:spec.domain.cpu.maxSockets"}},
		{"maxSockets above sockets", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.CPU = &kubevirtv1.CPU{Sockets: 1, MaxSockets: 4}
		}, nil},
		{"cpu features", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.CPU = &kubevirtv1.CPU{Features: []kubevirtv1.CPUFeature{{Name: "vmx", Policy: "require"}, {Name: "pcid"}}}
		}, nil},
		{"cpu feature without name, bad policy", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.CPU = &kubevirtv1.CPU{Features: []kubevirtv1.CPUFeature{{Policy: "sometimes"}}}
		}, []string{"Required:spec.domain.cpu.features[0].name", "NotSupported:spec.domain.cpu.features[0].policy"}},
	})
}

func TestValidateMachine(t *testing.T) {
	machine := func(typ string) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		return func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.Domain.Machine = &kubevirtv1.Machine{Type: typ} }
	}
	runSpecCases(t, []specCase{
		{"q35", machine("q35"), nil},
		{"pc", machine("pc"), nil},
		{"versioned q35", machine("pc-q35-rhel9.4.0"), nil},
		{"versioned i440fx", machine("pc-i440fx-8.2"), nil},
		{"empty is defaulted", machine(""), nil},
		{"arm virt", machine("virt"), []string{"NotSupported:spec.domain.machine.type"}},
		{"bare prefix", machine("pc-q35-"), []string{"NotSupported:spec.domain.machine.type"}},
		{"injection", machine("q35 <evil/>"), []string{"NotSupported:spec.domain.machine.type"}},
	})
}

func TestValidateIOThreads(t *testing.T) {
	policy := func(p kubevirtv1.IOThreadsPolicy, count *int32) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		return func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.IOThreadsPolicy = &p
			if count != nil {
				s.Domain.IOThreads = &kubevirtv1.DiskIOThreads{SupplementalPoolThreadCount: count}
			}
		}
	}
	runSpecCases(t, []specCase{
		{"shared", policy(kubevirtv1.IOThreadsPolicyShared, nil), nil},
		{"auto", policy(kubevirtv1.IOThreadsPolicyAuto, nil), nil},
		{"pool with size", policy(kubevirtv1.IOThreadsPolicySupplementalPool, ptr(int32(4))), nil},
		{"unknown policy", policy("lots", nil), []string{"NotSupported:spec.domain.ioThreadsPolicy"}},
		{"pool without size", policy(kubevirtv1.IOThreadsPolicySupplementalPool, nil),
			[]string{"Required:spec.domain.ioThreads.supplementalPoolThreadCount"}},
		{"pool of zero", policy(kubevirtv1.IOThreadsPolicySupplementalPool, ptr(int32(0))),
			[]string{"Invalid:spec.domain.ioThreads.supplementalPoolThreadCount"}},
	})
}
