package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestValidateVirtualMachine(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(vm *kubevirtv1.VirtualMachine)
		want   []string
	}{
		{"valid", func(*kubevirtv1.VirtualMachine) {}, nil},
		{"running instead of runStrategy", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.RunStrategy, vm.Spec.Running = nil, ptr(true)
		}, nil},
		{"neither (defaults to Halted in the controller)", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.RunStrategy = nil }, nil},
		{"running and runStrategy", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.Running = ptr(false) },
			[]string{"Invalid:spec.running"}},
		{"RerunOnFailure", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.RunStrategy = ptr(kubevirtv1.RunStrategyRerunOnFailure) }, nil},
		{"Manual", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.RunStrategy = ptr(kubevirtv1.RunStrategyManual) }, nil},
		{"Halted", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.RunStrategy = ptr(kubevirtv1.RunStrategyHalted) }, nil},
		{"Once", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.RunStrategy = ptr(kubevirtv1.RunStrategyOnce) }, nil},
		{"unknown run strategy", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.RunStrategy = ptr(kubevirtv1.VirtualMachineRunStrategy("Sometimes"))
		}, []string{"NotSupported:spec.runStrategy"}},
		{"empty run strategy", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.RunStrategy = ptr(kubevirtv1.RunStrategyUnknown)
		}, []string{"NotSupported:spec.runStrategy"}},
		{"WaitAsReceiver", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.RunStrategy = ptr(kubevirtv1.RunStrategyWaitAsReceiver)
		}, []string{"Forbidden:spec.runStrategy"}},
		{"volume replacement", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.UpdateVolumesStrategy = ptr(kubevirtv1.UpdateVolumesStrategyReplacement)
		}, nil},
		{"unknown volume update strategy", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.UpdateVolumesStrategy = ptr(kubevirtv1.UpdateVolumesStrategy("Copy"))
		}, []string{"NotSupported:spec.updateVolumesStrategy"}},
		{"no template", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.Template = nil }, []string{"Required:spec.template"}},
		{"bad template label", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Template.ObjectMeta.Labels = map[string]string{"app": "not valid!"}
		}, []string{"Invalid:spec.template.metadata.labels"}},
		{"bad template annotation key", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Template.ObjectMeta.Annotations = map[string]string{"no spaces allowed": "x"}
		}, []string{"Invalid:spec.template.metadata.annotations"}},
		{"sidecar hooks in the template", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Template.ObjectMeta.Annotations = map[string]string{SidecarHooksAnnotation: "[]"}
		}, []string{"Forbidden:spec.template.metadata.annotations[hooks.kubevirt.io/hookSidecars]"}},
		{"template spec errors under spec.template.spec", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Template.Spec.Domain.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: q("1")}
			vm.Spec.Template.Spec.Domain.Devices.GPUs = []kubevirtv1.GPU{{Name: "gpu1", DeviceName: "nvidia.com/TU104GL"}}
		}, []string{"Required:spec.template.spec.domain.resources.requests[memory]", "Forbidden:spec.template.spec.domain.devices.gpus"}},
		{"name not a DNS label", func(vm *kubevirtv1.VirtualMachine) { vm.Name = "VM1" }, []string{"Invalid:metadata.name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vm := validVM()
			tc.mutate(vm)
			compareErrs(t, tc.want, ValidateVirtualMachine(vm))
			// An update is validated like a create: the spec is mutable.
			compareErrs(t, tc.want, ValidateVirtualMachineUpdate(vm, validVM()))
		})
	}
}

func TestValidateRunningAndRunStrategyMessage(t *testing.T) {
	vm := validVM()
	vm.Spec.Running = ptr(true)
	errs := ValidateVirtualMachine(vm)
	if len(errs) != 1 {
		t.Fatalf("want one error, got %v", errs)
	}
	want := "spec.running: Invalid value: true: running and runStrategy are mutually exclusive: set only spec.runStrategy"
	if errs[0].Error() != want {
		t.Errorf("error = %q, want %q", errs[0].Error(), want)
	}
}
