package convert

import (
	"fmt"
	"path"
)

// Default paths inside the launcher pod (see the launcher pod contract).
const (
	// DefaultRunDir is the pod-private directory of the launcher: libvirt
	// socket, VNC socket, serial log.
	DefaultRunDir = "/var/run/nativevirt"
	// DefaultDisksDir holds copied container disks, overlays, cloud-init
	// ISOs, empty disks and kernel-boot files.
	DefaultDisksDir = "/var/run/nativevirt-disks"
	// DefaultPVCDir is where filesystem-mode claims are mounted, one
	// directory per volume.
	DefaultPVCDir = "/var/run/nativevirt-pvcs"
	// DefaultConfigDir is where config volumes (configMap, secret, ...) are mounted, one
	// directory per volume (launcherpod.ConfigVolumesDir).
	DefaultConfigDir = "/var/run/nativevirt-config"
	// DefaultEmulator is the QEMU binary of the launcher image.
	DefaultEmulator = "/usr/bin/qemu-system-x86_64"
)

// File names under a volume's directory (<DisksDir>/<volume name>/).
const (
	// DiskImageFile is the image of a container disk, an empty disk and a
	// filesystem-mode claim.
	DiskImageFile = "disk.img"
	// OverlayFile is the qcow2 overlay a writable container disk writes to.
	OverlayFile = "overlay.qcow2"
	// CloudInitISOFile is the generated cloud-init ISO.
	CloudInitISOFile = "cloudinit.iso"
	// ConfigISOFile is the disk the launcher builds from a config volume (configMap, secret,
	// serviceAccount, downwardAPI); launcherpod.ConfigDiskFile.
	ConfigISOFile = "config.iso"
	// SlicTableFile is the SLIC table's file in its secret volume (KubeVirt's key).
	SlicTableFile = "slic.bin"
	// MsdmTableFile is the MSDM table's file in its secret volume (KubeVirt's key).
	MsdmTableFile = "msdm.bin"
	// KernelBootDir is the directory under DisksDir that receives the
	// kernel and initrd of spec.domain.firmware.kernelBoot.
	KernelBootDir = "kernel-boot"
	// KernelBootKernelFile is the kernel's file name under KernelBootDir.
	KernelBootKernelFile = "kernel"
	// KernelBootInitrdFile is the initrd's file name under KernelBootDir.
	KernelBootInitrdFile = "initrd"
	// VNCSocketFile is the VNC socket under RunDir.
	VNCSocketFile = "vnc.sock"
	// SerialLogFile is the serial console log under RunDir.
	SerialLogFile = "serial.log"
)

// DiskFormat is the format of a disk image.
type DiskFormat string

// Disk formats.
const (
	// FormatRaw is a raw image.
	FormatRaw DiskFormat = "raw"
	// FormatQCOW2 is a qcow2 image.
	FormatQCOW2 DiskFormat = "qcow2"
)

// Context holds the node-side facts the conversion needs. The zero value of
// each field means its default.
type Context struct {
	// Emulation makes a TCG ("qemu") domain instead of a KVM one.
	Emulation bool
	// RunDir is the launcher's run directory inside the pod.
	RunDir string
	// DisksDir is the disks directory inside the pod.
	DisksDir string
	// PVCDir is the directory of filesystem-mode claims inside the pod.
	PVCDir string
	// ConfigDir is the directory of config volumes inside the pod.
	ConfigDir string
	// Emulator is the QEMU binary inside the pod.
	Emulator string
	// DiskFormats maps a volume name to the format of its image. Container
	// disks need an entry (see DetectFormat); other volumes default to raw.
	DiskFormats map[string]DiskFormat
	// BlockVolumes names the claim volumes that are block devices; they
	// appear in the pod at /dev/<volume name>.
	BlockVolumes map[string]bool
	// SharedVolumes names the claim volumes other nodes can attach at the same
	// time (ReadWriteMany): their disks get cache none, and they stay in place
	// during a live migration.
	SharedVolumes map[string]bool
}

// withDefaults fills in the defaults of unset fields.
func (c Context) withDefaults() Context {
	if c.RunDir == "" {
		c.RunDir = DefaultRunDir
	}
	if c.DisksDir == "" {
		c.DisksDir = DefaultDisksDir
	}
	if c.PVCDir == "" {
		c.PVCDir = DefaultPVCDir
	}
	if c.ConfigDir == "" {
		c.ConfigDir = DefaultConfigDir
	}
	if c.Emulator == "" {
		c.Emulator = DefaultEmulator
	}
	return c
}

// validate checks the context itself; errors here are the caller's, not the user's.
func (c Context) validate() error {
	for name, dir := range map[string]string{"RunDir": c.RunDir, "DisksDir": c.DisksDir, "PVCDir": c.PVCDir, "ConfigDir": c.ConfigDir, "Emulator": c.Emulator} {
		if !path.IsAbs(dir) {
			return fmt.Errorf("convert context: %s %q is not an absolute path", name, dir)
		}
	}
	for vol, f := range c.DiskFormats {
		if f != FormatRaw && f != FormatQCOW2 {
			return fmt.Errorf("convert context: volume %s: unknown disk format %q", vol, f)
		}
	}
	return nil
}

// TapName is the tap device of the interface at index i (KubeVirt's names).
func TapName(i int) string {
	return fmt.Sprintf("tap%d", i)
}

// VolumeDir is the directory of a volume under the disks directory.
func VolumeDir(disksDir, volume string) string {
	return path.Join(disksDir, volume)
}

// qcow2Magic starts every qcow2 image.
var qcow2Magic = []byte{'Q', 'F', 'I', 0xfb}

// DetectFormat tells a qcow2 image from a raw one by its first bytes (at
// least four). Anything that is not qcow2 is raw, as QEMU would read it.
func DetectFormat(header []byte) DiskFormat {
	if len(header) >= len(qcow2Magic) && string(header[:len(qcow2Magic)]) == string(qcow2Magic) {
		return FormatQCOW2
	}
	return FormatRaw
}
