// Package hotplug serves the addvolume and removevolume subresources of VirtualMachines and
// VirtualMachineInstances. On a VM the request edits the VM's template (declaratively, as
// KubeVirt's DeclarativeHotplugVolumes: the VM controller brings the running instance to it, a
// halted VM gets it at its next start); on a VMI it edits that instance's spec only.
package hotplug

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/validation"
)

// Request is one addvolume or removevolume request, already checked for its required fields.
type Request struct {
	// Add is set for addvolume.
	Add *kubevirtv1.AddVolumeOptions
	// Remove is set for removevolume.
	Remove *kubevirtv1.RemoveVolumeOptions
}

// CheckAdd refuses an addvolume body without its required parts, with KubeVirt's messages, and
// completes it as KubeVirt does: the disk takes the volume's name, the source is marked
// hotpluggable, and a disk without a device type is a disk on the default bus.
func CheckAdd(opts *kubevirtv1.AddVolumeOptions) error {
	switch {
	case opts.Name == "":
		return apierrors.NewBadRequest("AddVolumeOptions requires name to be set")
	case opts.Disk == nil:
		return apierrors.NewBadRequest("AddVolumeOptions requires disk to not be nil")
	case opts.VolumeSource == nil:
		return apierrors.NewBadRequest("AddVolumeOptions requires VolumeSource to not be nil")
	}
	src := opts.VolumeSource
	switch {
	case src.PersistentVolumeClaim != nil && src.DataVolume != nil:
		return invalid(opts.Name, field.Invalid(field.NewPath("volumeSource"), opts.Name,
			"exactly one of persistentVolumeClaim and dataVolume may be set"))
	case src.PersistentVolumeClaim != nil:
		if src.PersistentVolumeClaim.ClaimName == "" {
			return invalid(opts.Name, field.Required(field.NewPath("volumeSource", "persistentVolumeClaim", "claimName"), ""))
		}
		src.PersistentVolumeClaim.Hotpluggable = true
	case src.DataVolume != nil:
		if src.DataVolume.Name == "" {
			return invalid(opts.Name, field.Required(field.NewPath("volumeSource", "dataVolume", "name"), ""))
		}
		src.DataVolume.Hotpluggable = true
	default:
		return invalid(opts.Name, field.Required(field.NewPath("volumeSource"),
			"one of persistentVolumeClaim and dataVolume is required"))
	}
	opts.Disk.Name = opts.Name
	d := &opts.Disk.DiskDevice
	if d.Disk == nil && d.LUN == nil && d.CDRom == nil {
		d.Disk = &kubevirtv1.DiskTarget{}
	}
	if d.Disk != nil && d.Disk.Bus == "" {
		d.Disk.Bus = kubevirtv1.DiskBusVirtio
	}
	if errs := validation.ValidateHotplugDisk(opts.Disk, field.NewPath("disk")); len(errs) > 0 {
		return invalid(opts.Name, errs...)
	}
	return nil
}

// CheckRemove refuses a removevolume body without a name, with KubeVirt's message.
func CheckRemove(opts *kubevirtv1.RemoveVolumeOptions) error {
	if opts.Name == "" {
		return apierrors.NewBadRequest("RemoveVolumeOptions requires name to be set")
	}
	return nil
}

func invalid(name string, errs ...*field.Error) error {
	return apierrors.NewInvalid(kubevirtv1.Kind("AddVolumeOptions"), name, errs)
}

// Verify refuses a request that does not fit the volumes it would change, with KubeVirt's
// messages (a 409 Conflict in KubeVirt and here).
func Verify(volumes []kubevirtv1.Volume, req Request) error {
	if a := req.Add; a != nil {
		source := SourceName(a.VolumeSource)
		for _, v := range volumes {
			if v.Name == a.Name {
				return refuse("Unable to add volume [%s] because volume with that name already exists", a.Name)
			}
			if claimOf(&v) == source {
				return refuse("Unable to add volume source [%s] because it already exists", source)
			}
		}
		return nil
	}
	name := req.Remove.Name
	for i := range volumes {
		v := &volumes[i]
		if v.Name == name || claimOf(v) == name {
			if !kubevirtv1.IsHotpluggableVolume(v) {
				return refuse("Unable to remove volume [%s] because it is not hotpluggable", v.Name)
			}
			return nil
		}
	}
	return refuse("Unable to remove volume [%s] because it does not exist", name)
}

// Apply changes spec as the request says: the new volume and its disk are appended; a removed
// volume goes with its disk. Verify has accepted the request.
func Apply(spec *kubevirtv1.VirtualMachineInstanceSpec, req Request) {
	if a := req.Add; a != nil {
		spec.Volumes = append(spec.Volumes, kubevirtv1.Volume{Name: a.Name, VolumeSource: kubevirtv1.VolumeSource{
			PersistentVolumeClaim: a.VolumeSource.PersistentVolumeClaim.DeepCopy(),
			DataVolume:            a.VolumeSource.DataVolume.DeepCopy(),
		}})
		disk := a.Disk.DeepCopy()
		disk.Name = a.Name
		spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, *disk)
		return
	}
	removed := ""
	volumes := spec.Volumes[:0:0]
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if removed == "" && (v.Name == req.Remove.Name || claimOf(v) == req.Remove.Name) {
			removed = v.Name
			continue
		}
		volumes = append(volumes, *v)
	}
	spec.Volumes = volumes
	disks := spec.Domain.Devices.Disks[:0:0]
	for _, d := range spec.Domain.Devices.Disks {
		if d.Name != removed {
			disks = append(disks, d)
		}
	}
	spec.Domain.Devices.Disks = disks
}

// SourceName is the claim or DataVolume name of a hotplug source.
func SourceName(src *kubevirtv1.HotplugVolumeSource) string {
	switch {
	case src.PersistentVolumeClaim != nil:
		return src.PersistentVolumeClaim.ClaimName
	case src.DataVolume != nil:
		return src.DataVolume.Name
	}
	return ""
}

// claimOf is the claim or DataVolume name of v, or "" for other volumes.
func claimOf(v *kubevirtv1.Volume) string {
	switch {
	case v.PersistentVolumeClaim != nil:
		return v.PersistentVolumeClaim.ClaimName
	case v.DataVolume != nil:
		return v.DataVolume.Name
	}
	return ""
}

// refusalMessage is a refusal in KubeVirt's words (which start with a capital letter).
type refusalMessage string

func (m refusalMessage) Error() string { return string(m) }

// refuse formats a refusal.
func refuse(format string, args ...any) error { return refusalMessage(fmt.Sprintf(format, args...)) }
