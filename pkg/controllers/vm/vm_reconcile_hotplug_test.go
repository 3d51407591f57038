package vm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func claimVolume(name string, hot bool) kubevirtv1.Volume {
	return kubevirtv1.Volume{Name: name, VolumeSource: kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
		PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: name + "-pvc"}, Hotpluggable: hot}}}
}

func diskNamed(name string) kubevirtv1.Disk {
	return kubevirtv1.Disk{Name: name, DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusSCSI}}}
}

func withSpecVolumes(spec *kubevirtv1.VirtualMachineInstanceSpec, vols ...kubevirtv1.Volume) {
	for _, v := range vols {
		spec.Volumes = append(spec.Volumes, v)
		spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, diskNamed(v.Name))
	}
}

func TestPlanHotplug(t *testing.T) {
	type want struct {
		added, removed, volumes []string
		owned                   string
	}
	tests := []struct {
		name  string
		vm    []kubevirtv1.Volume
		vmi   []kubevirtv1.Volume
		owned string
		phase kubevirtv1.VirtualMachineInstancePhase
		want  *want
	}{
		{name: "nothing hotplugged", vm: []kubevirtv1.Volume{claimVolume("root", false)}, vmi: []kubevirtv1.Volume{claimVolume("root", false)}, phase: kubevirtv1.Running},
		{name: "added to the VM reaches the running instance",
			vm:    []kubevirtv1.Volume{claimVolume("root", false), claimVolume("hot", true)},
			vmi:   []kubevirtv1.Volume{claimVolume("root", false)},
			phase: kubevirtv1.Running,
			want:  &want{added: []string{"hot"}, volumes: []string{"root", "hot"}, owned: "hot"}},
		{name: "not before the instance runs",
			vm:    []kubevirtv1.Volume{claimVolume("root", false), claimVolume("hot", true)},
			vmi:   []kubevirtv1.Volume{claimVolume("root", false)},
			phase: kubevirtv1.Scheduled},
		{name: "removed from the VM leaves the instance",
			vm:    []kubevirtv1.Volume{claimVolume("root", false)},
			vmi:   []kubevirtv1.Volume{claimVolume("root", false), claimVolume("hot", true)},
			owned: "hot", phase: kubevirtv1.Running,
			want: &want{removed: []string{"hot"}, volumes: []string{"root"}, owned: ""}},
		{name: "a volume hotplugged into the instance alone stays",
			vm:    []kubevirtv1.Volume{claimVolume("root", false)},
			vmi:   []kubevirtv1.Volume{claimVolume("root", false), claimVolume("mine", true)},
			phase: kubevirtv1.Running},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := newVM()
			withSpecVolumes(&vm.Spec.Template.Spec, tt.vm...)
			vmi := newVMI(tt.phase)
			withSpecVolumes(&vmi.Spec, tt.vmi...)
			if tt.owned != "" {
				vmi.Annotations = map[string]string{HotplugVolumesAnnotation: tt.owned}
			}
			ch := planHotplug(vm, vmi)
			if tt.want == nil {
				if ch != nil {
					t.Fatalf("planHotplug = %+v, want nothing to do", ch)
				}
				return
			}
			if ch == nil {
				t.Fatal("planHotplug = nil, want a change")
			}
			var vols, disks []string
			for _, v := range ch.volumes {
				vols = append(vols, v.Name)
			}
			for _, d := range ch.disks {
				disks = append(disks, d.Name)
			}
			got := &want{added: ch.added, removed: ch.removed, volumes: vols, owned: ch.owned}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("planHotplug (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(vols, disks); diff != "" {
				t.Errorf("disks do not follow volumes (-volumes +disks):\n%s", diff)
			}
		})
	}
}

func TestSpecHashIgnoresHotplugVolumes(t *testing.T) {
	vm := newVM()
	withSpecVolumes(&vm.Spec.Template.Spec, claimVolume("root", false))
	before := specHash(vm)
	withSpecVolumes(&vm.Spec.Template.Spec, claimVolume("hot", true))
	if got := specHash(vm); got != before {
		t.Errorf("specHash changed with a hotpluggable volume: %s, want %s", got, before)
	}
	withSpecVolumes(&vm.Spec.Template.Spec, claimVolume("cold", false))
	if got := specHash(vm); got == before {
		t.Error("specHash did not change with a new non-hotpluggable volume")
	}
}
