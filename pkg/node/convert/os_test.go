package convert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestConvertOS(t *testing.T) {
	q35 := OSType{Arch: "x86_64", Machine: "q35", Value: "hvm"}
	smbios := &OSSMBIOS{Mode: "sysinfo"}
	tests := []struct {
		name     string
		spec     kubevirtv1.VirtualMachineInstanceSpec
		noSerial bool
		want     OS
		wantErr  string
	}{{
		name: "defaults: q35 and SeaBIOS",
		want: OS{Type: q35, SMBIOS: smbios},
	}, {
		name: "i440fx machine",
		spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Machine: &kubevirtv1.Machine{Type: "pc-i440fx-7.2"}}},
		want: OS{Type: OSType{Arch: "x86_64", Machine: "pc-i440fx-7.2", Value: "hvm"}, SMBIOS: smbios},
	}, {
		name: "BIOS on the serial console",
		spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{
			Bootloader: &kubevirtv1.Bootloader{BIOS: &kubevirtv1.BIOS{UseSerial: ptr(true)}}}}},
		want: OS{Type: q35, BIOS: &OSBIOS{UseSerial: "yes"}, SMBIOS: smbios},
	}, {
		name: "EFI without secure boot",
		spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{
			Bootloader: &kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{SecureBoot: ptr(false)}}}}},
		want: OS{Firmware: "efi", Type: q35, SMBIOS: smbios, FirmwareInfo: &FirmwareInfo{Features: []FirmwareFeature{
			{Enabled: "no", Name: "enrolled-keys"}, {Enabled: "no", Name: "secure-boot"}}}},
	}, {
		name: "kernel boot with initrd",
		spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{
			KernelBoot: &kubevirtv1.KernelBoot{KernelArgs: "console=ttyS0", Container: &kubevirtv1.KernelBootContainer{
				Image: "img", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd.img"}}}}},
		want: OS{Type: q35, SMBIOS: smbios, Kernel: "/d/kernel-boot/kernel", Initrd: "/d/kernel-boot/initrd", Cmdline: "console=ttyS0"},
	}, {
		name: "kernel boot without initrd",
		spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{
			KernelBoot: &kubevirtv1.KernelBoot{Container: &kubevirtv1.KernelBootContainer{Image: "img", KernelPath: "/vmlinuz"}}}}},
		want: OS{Type: q35, SMBIOS: smbios, Kernel: "/d/kernel-boot/kernel"},
	}, {
		name:    "unknown machine type",
		spec:    kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Machine: &kubevirtv1.Machine{Type: "virt"}}},
		wantErr: "spec.domain.machine.type",
	}, {
		name:    "other architecture",
		spec:    kubevirtv1.VirtualMachineInstanceSpec{Architecture: "arm64"},
		wantErr: "spec.architecture",
	}, {
		name: "EFI with secure boot (its default): the firmware with enrolled keys",
		spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{
			Bootloader: &kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{}}}}},
		want: OS{Firmware: "efi", Type: q35, SMBIOS: smbios, FirmwareInfo: &FirmwareInfo{Features: []FirmwareFeature{
			{Enabled: "yes", Name: "enrolled-keys"}, {Enabled: "yes", Name: "secure-boot"}}}},
	}, {
		name: "useSerial without a serial console",
		spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{
			Bootloader: &kubevirtv1.Bootloader{BIOS: &kubevirtv1.BIOS{UseSerial: ptr(true)}}}}},
		noSerial: true,
		wantErr:  "spec.domain.firmware.bootloader.bios.useSerial",
	}, {
		name: "kernel args without a kernel",
		spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{
			KernelBoot: &kubevirtv1.KernelBoot{KernelArgs: "quiet"}}}},
		wantErr: "spec.domain.firmware.kernelBoot.kernelArgs",
	}, {
		name: "initrd without a kernel",
		spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{
			KernelBoot: &kubevirtv1.KernelBoot{Container: &kubevirtv1.KernelBootContainer{Image: "img", InitrdPath: "/initrd"}}}}},
		wantErr: "spec.domain.firmware.kernelBoot.container.kernelPath",
	}, {
		name: "SLIC table from its secret volume",
		spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{
			ACPI: &kubevirtv1.ACPI{SlicNameRef: "slic"}}}},
		want: OS{Type: q35, SMBIOS: smbios, ACPI: &OSACPI{Tables: []ACPITable{{Type: "slic", Path: "/c/slic/slic.bin"}}}},
	}, {
		name: "MSDM table from its secret volume",
		spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{
			ACPI: &kubevirtv1.ACPI{MsdmNameRef: "msdm"}}}},
		want: OS{Type: q35, SMBIOS: smbios, ACPI: &OSACPI{Tables: []ACPITable{{Type: "msdm", Path: "/c/msdm/msdm.bin"}}}},
	}, {
		name: "SLIC and MSDM tables",
		spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{
			ACPI: &kubevirtv1.ACPI{SlicNameRef: "slic", MsdmNameRef: "msdm"}}}},
		want: OS{Type: q35, SMBIOS: smbios, ACPI: &OSACPI{Tables: []ACPITable{
			{Type: "slic", Path: "/c/slic/slic.bin"}, {Type: "msdm", Path: "/c/msdm/msdm.bin"}}}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vmi := &kubevirtv1.VirtualMachineInstance{Spec: tc.spec}
			got, errs := convertOS(vmi, Context{DisksDir: "/d", ConfigDir: "/c"}, !tc.noSerial, field.NewPath("spec", "domain"))
			checkErrs(t, errs, tc.wantErr)
			if diff := cmp.Diff(tc.want, got); tc.wantErr == "" && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvertSysInfo(t *testing.T) {
	base := []Entry{{Name: "manufacturer", Value: "NativeVirt"}, {Name: "product", Value: "None"}, {Name: "family", Value: "NativeVirt"}}
	tests := []struct {
		name     string
		spec     kubevirtv1.DomainSpec
		wantUUID string
		want     *SysInfo
		wantErr  string
	}{{
		name: "no firmware",
		want: &SysInfo{Type: "smbios", System: &SysInfoTable{Entries: base}},
	}, {
		name: "UUID (lower-cased) and serial",
		spec: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{UUID: "0F6F3C52-8F0A-4C53-9D59-6C3F4C1B7E21", Serial: "S-1"}},
		want: &SysInfo{Type: "smbios", System: &SysInfoTable{Entries: append(append([]Entry{}, base...),
			Entry{Name: "uuid", Value: "0f6f3c52-8f0a-4c53-9d59-6c3f4c1b7e21"}, Entry{Name: "serial", Value: "S-1"})}},
		wantUUID: "0f6f3c52-8f0a-4c53-9d59-6c3f4c1b7e21",
	}, {
		name: "chassis, empty values left out",
		spec: kubevirtv1.DomainSpec{Chassis: &kubevirtv1.Chassis{Manufacturer: "ACME", Sku: "X1"}},
		want: &SysInfo{Type: "smbios", System: &SysInfoTable{Entries: base},
			Chassis: &SysInfoTable{Entries: []Entry{{Name: "manufacturer", Value: "ACME"}, {Name: "sku", Value: "X1"}}}},
	}, {
		name:    "malformed UUID",
		spec:    kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{UUID: "not-a-uuid"}},
		wantErr: "spec.domain.firmware.uuid",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			uuid, got, errs := convertSysInfo(&tc.spec, field.NewPath("spec", "domain"))
			checkErrs(t, errs, tc.wantErr)
			if tc.wantErr != "" {
				return
			}
			if uuid != tc.wantUUID {
				t.Errorf("uuid = %q, want %q", uuid, tc.wantUUID)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
