package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// dvVM returns a valid VirtualMachine whose root disk is the DataVolume of template "root".
func dvVM() *kubevirtv1.VirtualMachine {
	vm := validVM()
	vm.Spec.Template.Spec.Volumes[0].VolumeSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "root"}}
	vm.Spec.DataVolumeTemplates = []kubevirtv1.DataVolumeTemplateSpec{dvTemplate("root")}
	return vm
}

func dvTemplate(name string) kubevirtv1.DataVolumeTemplateSpec {
	return kubevirtv1.DataVolumeTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source: &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "http://images.example/disk.qcow2"}},
			Storage: &cdiv1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: q("1Gi")}}},
		},
	}
}

func TestValidateDataVolumeTemplates(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(vm *kubevirtv1.VirtualMachine)
		want   []string
	}{
		{"valid", func(*kubevirtv1.VirtualMachine) {}, nil},
		{"halted", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.RunStrategy = ptr(kubevirtv1.RunStrategyHalted) }, nil},
		{"same namespace", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].Namespace = "default" }, nil},
		{"dataVolume volume without template (an existing DataVolume)", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.DataVolumeTemplates = nil
		}, nil},
		{"no name", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].Name = "" },
			[]string{"Required:spec.dataVolumeTemplates[0].metadata.name"}},
		{"bad name", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.DataVolumeTemplates[0].Name = "Root_Disk"
			vm.Spec.Template.Spec.Volumes[0].DataVolume.Name = "Root_Disk"
		}, []string{"Invalid:spec.dataVolumeTemplates[0].metadata.name", "Invalid:spec.template.spec.volumes[0].dataVolume.name"}},
		{"duplicate names", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.DataVolumeTemplates = append(vm.Spec.DataVolumeTemplates, dvTemplate("root"))
		}, []string{"Duplicate:spec.dataVolumeTemplates[1].metadata.name"}},
		{"template not referenced", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.DataVolumeTemplates = append(vm.Spec.DataVolumeTemplates, dvTemplate("spare"))
		}, []string{"Invalid:spec.dataVolumeTemplates[1].metadata.name"}},
		{"other namespace", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].Namespace = "other" },
			[]string{"Invalid:spec.dataVolumeTemplates[0].metadata.namespace"}},
		{"no claim", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].Spec.Storage = nil },
			[]string{"Required:spec.dataVolumeTemplates[0].spec.pvc"}},
		{"no source", func(vm *kubevirtv1.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].Spec.Source = nil },
			[]string{"Required:spec.dataVolumeTemplates[0].spec.source"}},
		{"bad label", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.DataVolumeTemplates[0].Labels = map[string]string{"a b": "c"}
		}, []string{"Invalid:spec.dataVolumeTemplates[0].metadata.labels"}},
		{"volume without name", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.DataVolumeTemplates = nil
			vm.Spec.Template.Spec.Volumes[0].DataVolume.Name = ""
		}, []string{"Required:spec.template.spec.volumes[0].dataVolume.name"}},
		{"hotpluggable on a sata disk", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Template.Spec.Volumes[0].DataVolume.Hotpluggable = true
			vm.Spec.Template.Spec.Domain.Devices.Disks = []kubevirtv1.Disk{{Name: vm.Spec.Template.Spec.Volumes[0].Name,
				DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusSATA}}}}
		}, []string{"Invalid:spec.template.spec.domain.devices.disks[0].disk.bus"}},
		{"hotpluggable on a virtio disk", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Template.Spec.Volumes[0].DataVolume.Hotpluggable = true
			vm.Spec.Template.Spec.Domain.Devices.Disks = []kubevirtv1.Disk{{Name: vm.Spec.Template.Spec.Volumes[0].Name,
				DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}}}
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vm := dvVM()
			c.mutate(vm)
			compareErrs(t, c.want, ValidateVirtualMachine(vm))
		})
	}
}

func TestDataVolumeTemplateMessages(t *testing.T) {
	vm := dvVM()
	vm.Spec.DataVolumeTemplates = append(vm.Spec.DataVolumeTemplates, dvTemplate("spare"))
	vm.Spec.DataVolumeTemplates[0].Namespace = "other"
	want := map[string]string{
		"spec.dataVolumeTemplates[1].metadata.name":      "DataVolumeTemplate entry spec.dataVolumeTemplates[1] must be referenced in the VMI template's 'volumes' list",
		"spec.dataVolumeTemplates[0].metadata.namespace": "Embedded DataVolume namespace other differs from VM namespace default",
	}
	errs := ValidateVirtualMachine(vm)
	if len(errs) != len(want) {
		t.Fatalf("got %v, want %d errors", errs, len(want))
	}
	for _, e := range errs {
		if want[e.Field] != e.Detail {
			t.Errorf("%s: detail %q, want %q", e.Field, e.Detail, want[e.Field])
		}
	}
}

func TestDataVolumeVolumeInInstance(t *testing.T) {
	vmi := validVMI()
	vmi.Spec.Volumes[0].VolumeSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "root"}}
	compareErrs(t, nil, ValidateVirtualMachineInstance(vmi))
}

// A VMIRS's template may use a DataVolume too (its replicas share it, as in KubeVirt).
func TestDataVolumeVolumeInReplicaSet(t *testing.T) {
	rs := validRS()
	rs.Spec.Template.Spec.Volumes[0].VolumeSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "root"}}
	compareErrs(t, nil, ValidateVirtualMachineInstanceReplicaSet(rs))
	rs.Spec.Template.Spec.Volumes[0].VolumeSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{}}
	compareErrs(t, []string{"Required:spec.template.spec.volumes[0].dataVolume.name"}, ValidateVirtualMachineInstanceReplicaSet(rs))
}
