package validation

import (
	"testing"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestMatchers(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(vm *kubevirtv1.VirtualMachine)
		want   []string
	}{
		{"instance type by name and default kind", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "u1.small"}
		}, nil},
		{"KubeVirt's kinds, as resource names too", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "u1.small", Kind: "virtualmachineinstancetype"}
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "fedora", Kind: "VirtualMachineClusterPreference"}
		}, nil},
		{"no name", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{}
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{}
		}, []string{"Required:spec.instancetype.name", "Required:spec.preference.name"}},
		{"bad names", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "U1_small", RevisionName: "Rev!"}
		}, []string{"Invalid:spec.instancetype.name", "Invalid:spec.instancetype.revisionName"}},
		{"inferFromVolume left unresolved (no Kubernetes API)", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{InferFromVolume: "rootdisk"}
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{InferFromVolume: "rootdisk"}
		}, []string{"Forbidden:spec.instancetype.inferFromVolume", "Forbidden:spec.preference.inferFromVolume"}},
		{"unknown kinds", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "a", Kind: "VirtualMachinePreference"}
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "b", Kind: "Pod"}
		}, []string{"Invalid:spec.instancetype.kind", "Invalid:spec.preference.kind"}},
		{"memory left to the instance type", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "u1.small"}
			vm.Spec.Template.Spec.Domain.Resources.Requests = nil
		}, nil},
		{"memory left to a preference alone", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "fedora"}
			vm.Spec.Template.Spec.Domain.Resources.Requests = nil
		}, []string{"Required:spec.template.spec.domain.resources.requests[memory]"}},
		{"a template a preference completes is checked with an instance's defaults", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "fedora"}
			vm.Spec.Template.Spec.Domain.Devices.Disks[0].Disk.Bus = ""
			vm.Spec.Template.Spec.Domain.Devices.Disks[1].DiskDevice = kubevirtv1.DiskDevice{}
			vm.Spec.Template.Spec.Domain.Devices.Interfaces = nil
			vm.Spec.Template.Spec.Networks = nil
		}, nil},
		{"other template errors stay with an instance type", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "u1.small"}
			vm.Spec.Template.Spec.Domain.Resources.Requests = nil
			vm.Spec.Template.Spec.Hostname = "Not_A_Label"
		}, []string{"Invalid:spec.template.spec.hostname"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vm := validVM()
			tc.mutate(vm)
			compareErrs(t, tc.want, ValidateVirtualMachine(vm))
		})
	}
}
