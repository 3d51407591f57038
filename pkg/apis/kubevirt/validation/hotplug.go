package validation

import (
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// ValidateHotplugDisk checks the disk of a hotpluggable volume as KubeVirt does: a disk (not a
// CD-ROM or LUN) on the scsi or virtio bus, with KubeVirt's messages.
func ValidateHotplugDisk(d *kubevirtv1.Disk, fldPath *field.Path) field.ErrorList {
	dev := d.DiskDevice
	if dev.Disk == nil {
		return field.ErrorList{field.Invalid(fldPath, d.Name, fmt.Sprintf(
			"Hotplug configuration for [%s] requires diskDevice of type 'disk' to be used.", d.Name))}
	}
	// An unset bus is defaulted to virtio.
	if bus := dev.Disk.Bus; bus != "" && bus != kubevirtv1.DiskBusSCSI && bus != kubevirtv1.DiskBusVirtio {
		return field.ErrorList{field.Invalid(fldPath.Child("disk", "bus"), string(bus), fmt.Sprintf(
			"Hotplug configuration for disk [%s] requires bus to be 'scsi' or 'virtio'. [%s] is not permitted.", d.Name, bus))}
	}
	return nil
}

// validateHotplugVolumes requires a disk for every hotpluggable volume, fit for hotplug.
func validateHotplugVolumes(spec *kubevirtv1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	disks := map[string]int{}
	for i, d := range spec.Domain.Devices.Disks {
		disks[d.Name] = i
	}
	var errs field.ErrorList
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if !kubevirtv1.IsHotpluggableVolume(v) {
			continue
		}
		j, ok := disks[v.Name]
		if !ok {
			errs = append(errs, field.Required(fldPath.Child("domain", "devices", "disks"),
				fmt.Sprintf("disk %s does not exist: a hotpluggable volume needs a disk", v.Name)))
			continue
		}
		errs = append(errs, ValidateHotplugDisk(&spec.Domain.Devices.Disks[j],
			fldPath.Child("domain", "devices", "disks").Index(j))...)
	}
	return errs
}

// withoutHotplugVolumes returns a shallow copy of spec without its hotpluggable volumes and
// their disks: what must stay as it was while a guest runs.
func withoutHotplugVolumes(spec *kubevirtv1.VirtualMachineInstanceSpec) *kubevirtv1.VirtualMachineInstanceSpec {
	out := *spec
	hot := hotplugVolumes(spec)
	if len(hot) == 0 {
		return &out
	}
	out.Volumes = nil
	for _, v := range spec.Volumes {
		if _, ok := hot[v.Name]; !ok {
			out.Volumes = append(out.Volumes, v)
		}
	}
	out.Domain.Devices.Disks = nil
	for _, d := range spec.Domain.Devices.Disks {
		if _, ok := hot[d.Name]; !ok {
			out.Domain.Devices.Disks = append(out.Domain.Devices.Disks, d)
		}
	}
	return &out
}

// hotplugVolumes maps the names of spec's hotpluggable volumes to them.
func hotplugVolumes(spec *kubevirtv1.VirtualMachineInstanceSpec) map[string]*kubevirtv1.Volume {
	out := map[string]*kubevirtv1.Volume{}
	for i := range spec.Volumes {
		if kubevirtv1.IsHotpluggableVolume(&spec.Volumes[i]) {
			out[spec.Volumes[i].Name] = &spec.Volumes[i]
		}
	}
	return out
}

// validateHotplugUpdate lets hotpluggable volumes (with their disks) come and go while every
// other part of the spec stays; a hotpluggable volume that stays must not change.
func validateHotplugUpdate(newSpec, oldSpec *kubevirtv1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	errs := validateImmutableSpec(withoutHotplugVolumes(newSpec), withoutHotplugVolumes(oldSpec), fldPath)
	if len(errs) > 0 {
		return errs
	}
	oldHot := hotplugVolumes(oldSpec)
	oldDisks := diskMap(oldSpec)
	newDisks := diskMap(newSpec)
	for i := range newSpec.Volumes {
		v := &newSpec.Volumes[i]
		old, ok := oldHot[v.Name]
		if !ok {
			continue
		}
		p := fldPath.Child("volumes").Index(i)
		if !apiequality.Semantic.DeepEqual(v, old) {
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("hotplug volume %s, changed", v.Name)))
		} else if !apiequality.Semantic.DeepEqual(newDisks[v.Name], oldDisks[v.Name]) {
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("hotplug disk %s, changed", v.Name)))
		}
	}
	if len(errs) == 0 && !apiequality.Semantic.DeepEqual(newSpec, oldSpec) {
		errs = append(errs, ValidateVMISpec(newSpec, fldPath)...)
	}
	return errs
}

func diskMap(spec *kubevirtv1.VirtualMachineInstanceSpec) map[string]*kubevirtv1.Disk {
	out := map[string]*kubevirtv1.Disk{}
	for i := range spec.Domain.Devices.Disks {
		out[spec.Domain.Devices.Disks[i].Name] = &spec.Domain.Devices.Disks[i]
	}
	return out
}
