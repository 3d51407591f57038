package validation

import (
	"testing"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestValidateDisks(t *testing.T) {
	disk0 := func(mutate func(d *kubevirtv1.Disk)) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		return func(s *kubevirtv1.VirtualMachineInstanceSpec) { mutate(&s.Domain.Devices.Disks[0]) }
	}
	runSpecCases(t, []specCase{
		{"duplicate disk", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks[1].Name = "rootdisk"
		}, []string{"Duplicate:spec.domain.devices.disks[1].name"}},
		{"disk name not a DNS label", disk0(func(d *kubevirtv1.Disk) { d.Name = "Root_Disk" }),
			[]string{"Invalid:spec.domain.devices.disks[0].name"}},
		{"disk without name", disk0(func(d *kubevirtv1.Disk) { d.Name = "" }),
			[]string{"Required:spec.domain.devices.disks[0].name"}},
		{"disk without volume", disk0(func(d *kubevirtv1.Disk) { d.Name = "data" }),
			[]string{"Invalid:spec.domain.devices.disks[0].name"}},
		{"volume without disk is allowed", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks = s.Domain.Devices.Disks[:1]
		}, nil},
		{"no device type (defaulted to disk)", disk0(func(d *kubevirtv1.Disk) { d.Disk = nil }), nil},
		{"disk and cdrom", disk0(func(d *kubevirtv1.Disk) { d.CDRom = &kubevirtv1.CDRomTarget{} }),
			[]string{"Invalid:spec.domain.devices.disks[0]"}},
		{"sata, scsi and usb disks", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks[0].Disk.Bus = kubevirtv1.DiskBusSATA
			s.Domain.Devices.Disks[1].Disk.Bus = kubevirtv1.DiskBusSCSI
			s.Domain.Devices.Disks = append(s.Domain.Devices.Disks, kubevirtv1.Disk{Name: "usb",
				DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusUSB}}})
			s.Volumes = append(s.Volumes, kubevirtv1.Volume{Name: "usb",
				VolumeSource: kubevirtv1.VolumeSource{EmptyDisk: &kubevirtv1.EmptyDiskSource{Capacity: q("1Gi")}}})
		}, nil},
		{"ide disk", disk0(func(d *kubevirtv1.Disk) { d.Disk.Bus = "ide" }),
			[]string{"NotSupported:spec.domain.devices.disks[0].disk.bus"}},
		{"sata cdrom", disk0(func(d *kubevirtv1.Disk) {
			d.Disk = nil
			d.CDRom = &kubevirtv1.CDRomTarget{Bus: kubevirtv1.DiskBusSATA, Tray: kubevirtv1.TrayStateClosed}
		}), nil},
		{"virtio cdrom", disk0(func(d *kubevirtv1.Disk) {
			d.Disk = nil
			d.CDRom = &kubevirtv1.CDRomTarget{Bus: kubevirtv1.DiskBusVirtio}
		}), []string{"NotSupported:spec.domain.devices.disks[0].cdrom.bus"}},
		{"usb cdrom", disk0(func(d *kubevirtv1.Disk) {
			d.Disk = nil
			d.CDRom = &kubevirtv1.CDRomTarget{Bus: kubevirtv1.DiskBusUSB}
		}), []string{"NotSupported:spec.domain.devices.disks[0].cdrom.bus"}},
		{"cdrom tray", disk0(func(d *kubevirtv1.Disk) {
			d.Disk = nil
			d.CDRom = &kubevirtv1.CDRomTarget{Tray: "ajar"}
		}), []string{"NotSupported:spec.domain.devices.disks[0].cdrom.tray"}},
		{"driver settings", disk0(func(d *kubevirtv1.Disk) {
			d.Cache, d.IO, d.ErrorPolicy = kubevirtv1.CacheNone, kubevirtv1.IONative, ptr(kubevirtv1.DiskErrorPolicyReport)
		}), nil},
		{"bad driver settings", disk0(func(d *kubevirtv1.Disk) {
			d.Cache, d.IO, d.ErrorPolicy = "unsafe", "io_uring", ptr(kubevirtv1.DiskErrorPolicy("panic"))
		}), []string{"NotSupported:spec.domain.devices.disks[0].cache", "NotSupported:spec.domain.devices.disks[0].io",
			"NotSupported:spec.domain.devices.disks[0].errorPolicy"}},
		{"pci address", disk0(func(d *kubevirtv1.Disk) { d.Disk.PciAddress = "0000:81:01.0" }), nil},
		{"bad pci address", disk0(func(d *kubevirtv1.Disk) { d.Disk.PciAddress = "81:01.0" }),
			[]string{"Invalid:spec.domain.devices.disks[0].disk.pciAddress"}},
		{"pci address on sata", disk0(func(d *kubevirtv1.Disk) {
			d.Disk.Bus, d.Disk.PciAddress = kubevirtv1.DiskBusSATA, "0000:81:01.0"
		}), []string{"Invalid:spec.domain.devices.disks[0].disk.pciAddress"}},
	})
}

func TestValidateBootOrder(t *testing.T) {
	runSpecCases(t, []specCase{
		{"unique orders", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks[0].BootOrder = ptr(int32(1))
			s.Domain.Devices.Disks[1].BootOrder = ptr(int32(3))
			s.Domain.Devices.Interfaces[0].BootOrder = ptr(int32(2))
		}, nil},
		{"zero", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks[0].BootOrder = ptr(int32(0))
		}, []string{"Invalid:spec.domain.devices.disks[0].bootOrder"}},
		{"negative on an interface", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Interfaces[0].BootOrder = ptr(int32(-1))
		}, []string{"Invalid:spec.domain.devices.interfaces[0].bootOrder"}},
		{"duplicate between disks", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks[0].BootOrder = ptr(int32(1))
			s.Domain.Devices.Disks[1].BootOrder = ptr(int32(1))
		}, []string{"Duplicate:spec.domain.devices.disks[1].bootOrder"}},
		{"duplicate between a disk and an interface", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks[0].BootOrder = ptr(int32(2))
			s.Domain.Devices.Interfaces[0].BootOrder = ptr(int32(2))
		}, []string{"Duplicate:spec.domain.devices.interfaces[0].bootOrder"}},
	})
}
