package convert

import (
	"errors"
	"path"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// diskSource is where a disk's content lives inside the launcher pod.
type diskSource struct {
	// block is true for a block device, false for an image file.
	block bool
	// path is the file or device path.
	path string
	// format is the image format.
	format DiskFormat
	// transient asks for a copy-on-write overlay that is dropped when the
	// guest stops: the base image stays untouched.
	transient bool
	// overlay, when set, is the qcow2 image (prepared by the node agent) a
	// writable disk writes to, with path as its backing image: the base
	// image stays untouched, and unlike a transient overlay it migrates.
	overlay string
	// readOnly says the source itself may not be written.
	readOnly bool
	// shared says other nodes reach the same data (a ReadWriteMany claim): the
	// host page cache is bypassed so that a live migration hands over
	// consistent data.
	shared bool
}

// VolumeImagePath is the image of a container disk or an empty disk inside
// the pod: <disksDir>/<volume>/disk.img.
func VolumeImagePath(disksDir, volume string) string {
	return path.Join(disksDir, volume, DiskImageFile)
}

// ContainerDiskOverlayPath is the copy-on-write overlay of a container disk
// inside the pod: <disksDir>/<volume>/overlay.qcow2, backed by
// VolumeImagePath. The node agent creates it before the domain starts, and on
// a migration target before the migration.
func ContainerDiskOverlayPath(disksDir, volume string) string {
	return path.Join(disksDir, volume, OverlayFile)
}

// NeedsOverlay reports whether the container disk volume backs a writable
// disk, which writes to an overlay at ContainerDiskOverlayPath (a CD-ROM or a
// read-only disk reads the image itself).
func NeedsOverlay(vmi *kubevirtv1.VirtualMachineInstance, volume string) bool {
	for _, d := range vmi.Spec.Domain.Devices.Disks {
		if d.Name == volume {
			return d.CDRom == nil && d.LUN == nil && (d.Disk == nil || !d.Disk.ReadOnly)
		}
	}
	return false
}

// CloudInitISOPath is the cloud-init ISO of a volume inside the pod:
// <disksDir>/<volume>/cloudinit.iso.
func CloudInitISOPath(disksDir, volume string) string {
	return path.Join(disksDir, volume, CloudInitISOFile)
}

// ConfigISOPath is the disk of a config volume inside the pod:
// <disksDir>/<volume>/config.iso.
func ConfigISOPath(disksDir, volume string) string {
	return path.Join(disksDir, volume, ConfigISOFile)
}

// ClaimPath is the image of a filesystem-mode claim inside the pod:
// <pvcDir>/<volume>/disk.img. Block-mode claims are /dev/<volume>.
func ClaimPath(pvcDir, volume string) string {
	return path.Join(pvcDir, volume, DiskImageFile)
}

// errUnknownContainerDiskFormat says the caller did not detect a container
// disk's format.
var errUnknownContainerDiskFormat = errors.New("the image format of the container disk is unknown to the converter (Context.DiskFormats; see DetectFormat)")

// volumeSource gives the source of a volume, per the launcher pod's layout:
// container disks are copied into the disks directory and used through a
// qcow2 overlay; empty disks and cloud-init ISOs are files the node
// agent writes there, config volume ISOs files the launcher writes there; claims are mounted (file) or attached (block) by the
// pod; host disks are used at their path.
func volumeSource(vol *kubevirtv1.Volume, c Context, p *field.Path) (diskSource, *field.Error) {
	name := vol.Name
	format := func(def DiskFormat) DiskFormat {
		if f, ok := c.DiskFormats[name]; ok {
			return f
		}
		return def
	}
	claim := func(readOnly bool) diskSource {
		if c.BlockVolumes[name] {
			return diskSource{block: true, path: "/dev/" + name, format: format(FormatRaw), readOnly: readOnly, shared: c.SharedVolumes[name]}
		}
		return diskSource{path: ClaimPath(c.PVCDir, name), format: format(FormatRaw), readOnly: readOnly, shared: c.SharedVolumes[name]}
	}
	src := &vol.VolumeSource
	switch {
	case src.ContainerDisk != nil:
		f, ok := c.DiskFormats[name]
		if !ok {
			return diskSource{}, field.InternalError(p.Child("containerDisk"), errUnknownContainerDiskFormat)
		}
		return diskSource{path: VolumeImagePath(c.DisksDir, name), format: f, overlay: ContainerDiskOverlayPath(c.DisksDir, name)}, nil
	case src.EmptyDisk != nil:
		return diskSource{path: VolumeImagePath(c.DisksDir, name), format: FormatRaw}, nil
	case src.CloudInitNoCloud != nil || src.CloudInitConfigDrive != nil:
		return diskSource{path: CloudInitISOPath(c.DisksDir, name), format: FormatRaw}, nil
	case kubevirtv1.IsConfigVolume(src):
		// Built by the launcher from the pod's volume; the guest only reads it.
		return diskSource{path: ConfigISOPath(c.DisksDir, name), format: FormatRaw, readOnly: true}, nil
	case src.HostDisk != nil:
		if !path.IsAbs(src.HostDisk.Path) {
			return diskSource{}, field.Invalid(p.Child("hostDisk", "path"), src.HostDisk.Path, "must be an absolute path")
		}
		return diskSource{path: path.Clean(src.HostDisk.Path), format: format(FormatRaw)}, nil
	case src.PersistentVolumeClaim != nil:
		// A hotpluggable claim the instance has from its start is in the launcher pod like any
		// other claim.
		return claim(src.PersistentVolumeClaim.ReadOnly), nil
	case src.DataVolume != nil:
		// The DataVolume's claim, mounted or attached by the pod like a persistentVolumeClaim's
		// (also a hotpluggable one the instance has from its start).
		return claim(false), nil
	case src.Ephemeral != nil:
		if src.Ephemeral.PersistentVolumeClaim == nil {
			return diskSource{}, field.Required(p.Child("ephemeral", "persistentVolumeClaim"), "an ephemeral volume needs a claim")
		}
		s := claim(true)
		s.transient = true
		return s, nil
	}
	return diskSource{}, field.Forbidden(p, "volume "+name+": this volume type is not supported by the domain converter")
}
