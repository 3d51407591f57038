package convert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestConvertCPU(t *testing.T) {
	topo := func(s, c, th uint32) *CPUTopology {
		return &CPUTopology{Sockets: s, Dies: 1, Cores: c, Threads: th}
	}
	tests := []struct {
		name      string
		spec      kubevirtv1.DomainSpec
		emulation bool
		wantVCPUs uint32
		wantCPU   *CPU
		wantErr   string
	}{{
		name:      "nothing set: one vCPU, host-model under KVM",
		wantVCPUs: 1,
		wantCPU:   &CPU{Mode: "host-model", Topology: topo(1, 1, 1)},
	}, {
		name:      "nothing set under emulation: QEMU's default model",
		emulation: true,
		wantVCPUs: 1,
		wantCPU:   &CPU{Topology: topo(1, 1, 1)},
	}, {
		name:      "explicit topology",
		spec:      kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Sockets: 2, Cores: 3, Threads: 2}},
		wantVCPUs: 12,
		wantCPU:   &CPU{Mode: "host-model", Topology: topo(2, 3, 2)},
	}, {
		name:      "partial topology: unset parts are 1",
		spec:      kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Cores: 4}},
		wantVCPUs: 4,
		wantCPU:   &CPU{Mode: "host-model", Topology: topo(1, 4, 1)},
	}, {
		name: "CPU limit rounded up to sockets",
		spec: kubevirtv1.DomainSpec{Resources: kubevirtv1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: qty("500m")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: qty("2500m")},
		}},
		wantVCPUs: 3,
		wantCPU:   &CPU{Mode: "host-model", Topology: topo(3, 1, 1)},
	}, {
		name: "CPU request when no limit",
		spec: kubevirtv1.DomainSpec{Resources: kubevirtv1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: qty("2")},
		}},
		wantVCPUs: 2,
		wantCPU:   &CPU{Mode: "host-model", Topology: topo(2, 1, 1)},
	}, {
		name:      "host-passthrough kept under KVM",
		spec:      kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Model: "host-passthrough"}},
		wantVCPUs: 1,
		wantCPU:   &CPU{Mode: "host-passthrough", Topology: topo(1, 1, 1)},
	}, {
		name:      "host-passthrough dropped under emulation",
		spec:      kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Model: "host-passthrough"}},
		emulation: true,
		wantVCPUs: 1,
		wantCPU:   &CPU{Topology: topo(1, 1, 1)},
	}, {
		name:      "named model under emulation",
		spec:      kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Model: "Skylake-Client"}},
		emulation: true,
		wantVCPUs: 1,
		wantCPU:   &CPU{Mode: "custom", Match: "exact", Model: &CPUModel{Fallback: "allow", Value: "Skylake-Client"}, Topology: topo(1, 1, 1)},
	}, {
		name: "features under emulation get a model",
		spec: kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Features: []kubevirtv1.CPUFeature{
			{Name: "sse4.2"}, {Name: "vmx", Policy: "disable"},
		}}},
		emulation: true,
		wantVCPUs: 1,
		wantCPU: &CPU{Mode: "custom", Match: "exact", Model: &CPUModel{Fallback: "allow", Value: "qemu64"}, Topology: topo(1, 1, 1),
			Features: []CPUFeature{{Policy: "require", Name: "sse4.2"}, {Policy: "disable", Name: "vmx"}}},
	}, {
		name:    "negative cores",
		spec:    kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Cores: -1}},
		wantErr: "spec.domain.cpu.cores",
	}, {
		name:    "too many vCPUs",
		spec:    kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Cores: 64, Sockets: 4, Threads: 4}},
		wantErr: "must not exceed 512",
	}, {
		name:    "bad feature policy",
		spec:    kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Features: []kubevirtv1.CPUFeature{{Name: "x", Policy: "maybe"}}}},
		wantErr: "spec.domain.cpu.features[0].policy",
	}, {
		name:    "dedicated CPUs refused",
		spec:    kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{DedicatedCPUPlacement: true}},
		wantErr: "spec.domain.cpu.dedicatedCpuPlacement",
	}, {
		name:    "NUMA refused",
		spec:    kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{NUMA: &kubevirtv1.NUMA{}}},
		wantErr: "spec.domain.cpu.numa",
	}, {
		name:    "CPU hotplug refused",
		spec:    kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Sockets: 2, MaxSockets: 8}},
		wantErr: "spec.domain.cpu.maxSockets",
	}, {
		name:      "maxSockets equal to sockets is fine",
		spec:      kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Sockets: 2, MaxSockets: 2}},
		wantVCPUs: 2,
		wantCPU:   &CPU{Mode: "host-model", Topology: topo(2, 1, 1)},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vcpu, cpu, errs := convertCPU(&tc.spec, tc.emulation, field.NewPath("spec", "domain"))
			checkErrs(t, errs, tc.wantErr)
			if tc.wantErr != "" {
				return
			}
			if diff := cmp.Diff(&VCPU{Placement: "static", Count: tc.wantVCPUs}, vcpu); diff != "" {
				t.Errorf("vcpu (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCPU, cpu); diff != "" {
				t.Errorf("cpu (-want +got):\n%s", diff)
			}
		})
	}
}
