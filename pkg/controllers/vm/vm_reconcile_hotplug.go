package vm

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/vmis"
)

// HotplugVolumesAnnotation on an instance lists (comma-separated) the hotpluggable volumes it
// has from its VM: the VM controller removes from the instance only those, so that a volume
// hotplugged into the instance alone (the VMI's addvolume) is left to that instance.
const HotplugVolumesAnnotation = "nativevirt.io/vm-hotplug-volumes"

// Event reasons of hotplug propagation.
const (
	ReasonVolumeHotplugged   = "SuccessfulVolumeHotplug"
	ReasonVolumeUnplugged    = "SuccessfulVolumeUnplug"
	ReasonFailedVolumeChange = "FailedVolumeHotplug"
)

// hotplugChange is what the VM's template asks of its running instance's hotpluggable volumes.
type hotplugChange struct {
	volumes []kubevirtv1.Volume
	disks   []kubevirtv1.Disk
	owned   string
	added   []string
	removed []string
}

// planHotplug compares the hotpluggable volumes of the VM's template with those of its running
// instance (declarative hotplug, as KubeVirt's DeclarativeHotplugVolumes): the template's that
// the instance lacks are added with their disks, and those the instance has from the VM but
// the template no longer has are removed. nil: nothing to do.
func planHotplug(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) *hotplugChange {
	if vm.Spec.Template == nil || vmi == nil || vmis.IsTerminating(vmi) || vmi.Status.Phase != kubevirtv1.Running {
		return nil
	}
	tmpl := &vm.Spec.Template.Spec
	want := map[string]bool{}
	for i := range tmpl.Volumes {
		if kubevirtv1.IsHotpluggableVolume(&tmpl.Volumes[i]) {
			want[tmpl.Volumes[i].Name] = true
		}
	}
	owned := map[string]bool{}
	for _, n := range strings.Split(vmi.Annotations[HotplugVolumesAnnotation], ",") {
		if n != "" {
			owned[n] = true
		}
	}
	ch := &hotplugChange{}
	has := map[string]bool{}
	for _, v := range vmi.Spec.Volumes {
		has[v.Name] = true
		if owned[v.Name] && kubevirtv1.IsHotpluggableVolume(&v) && !want[v.Name] {
			ch.removed = append(ch.removed, v.Name)
			delete(owned, v.Name)
			continue
		}
		ch.volumes = append(ch.volumes, v)
	}
	removed := map[string]bool{}
	for _, n := range ch.removed {
		removed[n] = true
	}
	for _, d := range vmi.Spec.Domain.Devices.Disks {
		if !removed[d.Name] {
			ch.disks = append(ch.disks, d)
		}
	}
	for _, v := range tmpl.Volumes {
		if !want[v.Name] || has[v.Name] {
			continue
		}
		disk := templateDisk(tmpl, v.Name)
		if disk == nil {
			continue // validation keeps this from happening
		}
		ch.volumes = append(ch.volumes, v)
		ch.disks = append(ch.disks, *disk)
		ch.added = append(ch.added, v.Name)
		owned[v.Name] = true
	}
	if len(ch.added) == 0 && len(ch.removed) == 0 {
		return nil
	}
	names := make([]string, 0, len(owned))
	for n := range owned {
		names = append(names, n)
	}
	sort.Strings(names)
	ch.owned = strings.Join(names, ",")
	return ch
}

func templateDisk(spec *kubevirtv1.VirtualMachineInstanceSpec, name string) *kubevirtv1.Disk {
	for i := range spec.Domain.Devices.Disks {
		if spec.Domain.Devices.Disks[i].Name == name {
			return spec.Domain.Devices.Disks[i].DeepCopy()
		}
	}
	return nil
}

// ownedHotplugVolumes is the annotation value of a new instance: the template's hotpluggable
// volumes.
func ownedHotplugVolumes(spec *kubevirtv1.VirtualMachineInstanceSpec) string {
	var names []string
	for i := range spec.Volumes {
		if kubevirtv1.IsHotpluggableVolume(&spec.Volumes[i]) {
			names = append(names, spec.Volumes[i].Name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// syncHotplug writes the change into the instance: its volumes and disks, the volumes it now has
// from the VM, and, when hotplug was the VM's only change since, the VM generation it reflects.
// The patch carries the instance's resourceVersion: a concurrent change is a conflict, retried.
func (a *instanceAPI) syncHotplug(ctx context.Context, vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance,
	ch *hotplugChange) (*kubevirtv1.VirtualMachineInstance, error) {
	annotations := map[string]string{HotplugVolumesAnnotation: ch.owned}
	if vmi.Annotations[SpecHashAnnotation] == specHash(vm) {
		annotations[GenerationAnnotation] = strconv.FormatInt(vm.Generation, 10)
	}
	volumes, disks := ch.volumes, ch.disks
	if volumes == nil {
		volumes = []kubevirtv1.Volume{}
	}
	if disks == nil {
		disks = []kubevirtv1.Disk{}
	}
	data, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": annotations, "resourceVersion": vmi.ResourceVersion},
		"spec": map[string]any{
			"volumes": volumes,
			"domain":  map[string]any{"devices": map[string]any{"disks": disks}},
		},
	})
	if err != nil {
		return nil, err
	}
	updated, err := a.patch(ctx, vmi.Namespace, vmi.Name, data)
	if err != nil {
		a.event(vm, corev1.EventTypeWarning, ReasonFailedVolumeChange, fmt.Sprintf("Error changing the hotplugged volumes of instance %s: %v", vmi.Name, err))
		return nil, err
	}
	klog.FromContext(ctx).V(2).Info("Brought the instance's hotplugged volumes to the VM's", "added", ch.added, "removed", ch.removed)
	for _, n := range ch.added {
		a.event(vm, corev1.EventTypeNormal, ReasonVolumeHotplugged, fmt.Sprintf("Volume %s added to instance %s", n, vmi.Name))
	}
	for _, n := range ch.removed {
		a.event(vm, corev1.EventTypeNormal, ReasonVolumeUnplugged, fmt.Sprintf("Volume %s removed from instance %s", n, vmi.Name))
	}
	return updated, nil
}
