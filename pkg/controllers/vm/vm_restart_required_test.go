package vm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestRestartRequired(t *testing.T) {
	madeFrom := newVM()
	made := newVMI(kubevirtv1.Running, func(v *kubevirtv1.VirtualMachineInstance) { v.Annotations = newInstance(madeFrom).Annotations })
	guest := resource.MustParse("1Gi")
	cases := []struct {
		name   string
		change func(vm *kubevirtv1.VirtualMachine)
		vmi    *kubevirtv1.VirtualMachineInstance
		want   bool
	}{
		{"unchanged", func(*kubevirtv1.VirtualMachine) {}, made, false},
		{"the run strategy changed (a new generation, same template)", func(vm *kubevirtv1.VirtualMachine) {
			vm.Generation++
			vm.Spec.RunStrategy = ptrStrategy(kubevirtv1.RunStrategyManual)
		}, made, false},
		{"the template changed", func(vm *kubevirtv1.VirtualMachine) {
			vm.Generation++
			vm.Spec.Template.Spec.Domain.Memory = &kubevirtv1.Memory{Guest: &guest}
		}, made, true},
		{"another instance type", func(vm *kubevirtv1.VirtualMachine) {
			vm.Generation++
			vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "u1.large"}
		}, made, true},
		{"no instance", func(vm *kubevirtv1.VirtualMachine) {
			vm.Generation++
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "x"}
		}, nil, false},
		{"an instance being deleted", func(vm *kubevirtv1.VirtualMachine) {
			vm.Generation++
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "x"}
		}, newVMI(kubevirtv1.Running, vmiDeleting(), func(v *kubevirtv1.VirtualMachineInstance) { v.Annotations = made.Annotations }), false},
		{"an instance made before the hash existed", func(vm *kubevirtv1.VirtualMachine) {
			vm.Generation++
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "x"}
		}, newVMI(kubevirtv1.Running, func(v *kubevirtv1.VirtualMachineInstance) {
			v.Annotations = map[string]string{GenerationAnnotation: "3"}
		}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vm := newVM()
			tc.change(vm)
			c := restartRequired(vm, tc.vmi)
			if got := c != nil; got != tc.want {
				t.Fatalf("RestartRequired = %+v, want %v", c, tc.want)
			}
			if c != nil && (c.Status != corev1.ConditionTrue || c.Message != restartRequiredMessage) {
				t.Errorf("condition %+v", c)
			}
		})
	}
}
