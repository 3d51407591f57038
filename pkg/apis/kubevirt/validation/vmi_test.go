package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestValidateGuestIdentity(t *testing.T) {
	runSpecCases(t, []specCase{
		{"hostname and subdomain", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.Hostname, s.Subdomain = "web-1", "web" }, nil},
		{"bad hostname", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.Hostname = "web_1" }, []string{"Invalid:spec.hostname"}},
		{"hostname too long", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.Hostname = strings.Repeat("a", 64) },
			[]string{"Invalid:spec.hostname"}},
		{"bad subdomain", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.Subdomain = "a.b" }, []string{"Invalid:spec.subdomain"}},
		{"zero grace period", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.TerminationGracePeriodSeconds = ptr(int64(0)) }, nil},
		{"negative grace period", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.TerminationGracePeriodSeconds = ptr(int64(-1)) },
			[]string{"Invalid:spec.terminationGracePeriodSeconds"}},
		{"eviction strategies", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.EvictionStrategy = ptr(kubevirtv1.EvictionStrategyLiveMigrateIfPossible)
		}, nil},
		{"unknown eviction strategy", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.EvictionStrategy = ptr(kubevirtv1.EvictionStrategy("Evict"))
		}, []string{"NotSupported:spec.evictionStrategy"}},
		{"unknown start strategy", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.StartStrategy = ptr(kubevirtv1.StartStrategy("Later"))
		}, []string{"NotSupported:spec.startStrategy"}},
		{"paused start", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.StartStrategy = ptr(kubevirtv1.StartStrategyPaused)
		}, nil},
		{"amd64", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.Architecture = "amd64" }, nil},
		{"arm64", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.Architecture = "arm64" }, []string{"NotSupported:spec.architecture"}},
	})
}

func TestValidateVirtualMachineInstance(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(vmi *kubevirtv1.VirtualMachineInstance)
		want   []string
	}{
		{"valid", func(*kubevirtv1.VirtualMachineInstance) {}, nil},
		{"generated name left to the registry", func(vmi *kubevirtv1.VirtualMachineInstance) { vmi.Name, vmi.GenerateName = "", "vm-" }, nil},
		{"name with a dot", func(vmi *kubevirtv1.VirtualMachineInstance) { vmi.Name = "vm.example" }, []string{"Invalid:metadata.name"}},
		{"name of 64 characters", func(vmi *kubevirtv1.VirtualMachineInstance) { vmi.Name = strings.Repeat("v", 64) },
			[]string{"Invalid:metadata.name"}},
		{"name of 63 characters", func(vmi *kubevirtv1.VirtualMachineInstance) { vmi.Name = strings.Repeat("v", 63) }, nil},
		{"sidecar hooks", func(vmi *kubevirtv1.VirtualMachineInstance) {
			vmi.Annotations = map[string]string{SidecarHooksAnnotation: `[{"image": "x"}]`, "other": "fine"}
		}, []string{"Forbidden:metadata.annotations[hooks.kubevirt.io/hookSidecars]"}},
		{"spec errors under spec", func(vmi *kubevirtv1.VirtualMachineInstance) {
			vmi.Spec.Domain.Resources.Requests = corev1.ResourceList{}
		}, []string{"Required:spec.domain.resources.requests[memory]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vmi := validVMI()
			tc.mutate(vmi)
			compareErrs(t, tc.want, ValidateVirtualMachineInstance(vmi))
		})
	}
}

func TestValidateVirtualMachineInstanceUpdate(t *testing.T) {
	cases := []struct {
		name       string
		mutate     func(vmi *kubevirtv1.VirtualMachineInstance)
		want       []string
		wantDetail string
	}{
		{"unchanged", func(*kubevirtv1.VirtualMachineInstance) {}, nil, ""},
		{"labels and annotations change", func(vmi *kubevirtv1.VirtualMachineInstance) {
			vmi.Labels = map[string]string{"new": "label"}
			vmi.Annotations = map[string]string{"note": "x"}
		}, nil, ""},
		{"same quantity written differently", func(vmi *kubevirtv1.VirtualMachineInstance) {
			vmi.Spec.Domain.Resources.Requests[corev1.ResourceMemory] = q("131072Ki")
		}, nil, ""},
		{"status change", func(vmi *kubevirtv1.VirtualMachineInstance) { vmi.Status.Phase = kubevirtv1.Running }, nil, ""},
		{"memory change", func(vmi *kubevirtv1.VirtualMachineInstance) {
			vmi.Spec.Domain.Resources.Requests[corev1.ResourceMemory] = q("256Mi")
		}, []string{"Forbidden:spec"}, "spec.domain.resources.requests.memory"},
		{"disk added", func(vmi *kubevirtv1.VirtualMachineInstance) {
			vmi.Spec.Domain.Devices.Disks = append(vmi.Spec.Domain.Devices.Disks, kubevirtv1.Disk{Name: "extra"})
		}, []string{"Forbidden:spec"}, "spec.domain.devices.disks"},
		{"disk renamed", func(vmi *kubevirtv1.VirtualMachineInstance) {
			vmi.Spec.Domain.Devices.Disks[1].Name = "seed"
		}, []string{"Forbidden:spec"}, "spec.domain.devices.disks[1].name"},
		{"node selector added", func(vmi *kubevirtv1.VirtualMachineInstance) {
			vmi.Spec.NodeSelector = map[string]string{"a": "b"}
		}, []string{"Forbidden:spec"}, "spec.nodeSelector"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldVMI := validVMI()
			newVMI := validVMI()
			tc.mutate(newVMI)
			errs := ValidateVirtualMachineInstanceUpdate(newVMI, oldVMI)
			compareErrs(t, tc.want, errs)
			if tc.wantDetail != "" && len(errs) == 1 {
				want := "spec is immutable after creation (first change at " + tc.wantDetail + ")"
				if errs[0].Detail != want {
					t.Errorf("detail = %q, want %q", errs[0].Detail, want)
				}
			}
		})
	}
}
