package convert

import (
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// SMBIOS system values every guest sees.
const (
	smbiosManufacturer = "NativeVirt"
	smbiosProduct      = "None"
	smbiosFamily       = "NativeVirt"
)

// machineType is the QEMU machine type of the guest; it must be a q35 or
// i440fx (pc) type.
func machineType(spec *kubevirtv1.DomainSpec, p *field.Path) (string, *field.Error) {
	t := kubevirtv1.DefaultMachineType
	if spec.Machine != nil && spec.Machine.Type != "" {
		t = spec.Machine.Type
	}
	if t == "q35" || t == "pc" || strings.HasPrefix(t, "pc-q35-") || strings.HasPrefix(t, "pc-i440fx-") {
		return t, nil
	}
	return "", field.NotSupported(p.Child("machine", "type"), t, []string{"q35", "pc", "pc-q35-<version>", "pc-i440fx-<version>"})
}

// convertOS gives the domain's <os>: machine type, BIOS (SeaBIOS) or EFI,
// direct kernel boot and SMBIOS from <sysinfo>. serialConsole says whether
// the guest has a serial port (for bios.useSerial).
func convertOS(vmi *kubevirtv1.VirtualMachineInstance, c Context, serialConsole bool, p *field.Path) (OS, field.ErrorList) {
	spec := &vmi.Spec.Domain
	var errs field.ErrorList
	if a := vmi.Spec.Architecture; a != "" && a != "amd64" {
		errs = append(errs, field.NotSupported(field.NewPath("spec", "architecture"), a, []string{"amd64"}))
	}
	machine, err := machineType(spec, p)
	if err != nil {
		errs = append(errs, err)
	}
	os := OS{
		Type:   OSType{Arch: "x86_64", Machine: machine, Value: "hvm"},
		SMBIOS: &OSSMBIOS{Mode: "sysinfo"},
	}
	if fw := spec.Firmware; fw != nil {
		fp := p.Child("firmware")
		errs = append(errs, convertBootloader(fw.Bootloader, serialConsole, &os, fp.Child("bootloader"))...)
		errs = append(errs, convertKernelBoot(fw.KernelBoot, c, &os, fp.Child("kernelBoot"))...)
		if a := fw.ACPI; a != nil {
			// The secret volumes are mounted in the compute container; QEMU reads the tables.
			// libvirt takes an MSDM table since 11.2 (the launcher image's Debian 13 has 11.3).
			var tables []ACPITable
			if a.SlicNameRef != "" {
				tables = append(tables, ACPITable{Type: "slic", Path: path.Join(c.ConfigDir, a.SlicNameRef, SlicTableFile)})
			}
			if a.MsdmNameRef != "" {
				tables = append(tables, ACPITable{Type: "msdm", Path: path.Join(c.ConfigDir, a.MsdmNameRef, MsdmTableFile)})
			}
			if len(tables) > 0 {
				os.ACPI = &OSACPI{Tables: tables}
			}
		}
	}
	return os, errs
}

// convertBootloader selects SeaBIOS (the default) or an EFI firmware, with
// secure boot or without, which libvirt picks from the firmware descriptors
// of the launcher image.
func convertBootloader(b *kubevirtv1.Bootloader, serialConsole bool, os *OS, p *field.Path) field.ErrorList {
	if b == nil {
		return nil
	}
	var errs field.ErrorList
	if b.BIOS != nil && b.EFI != nil {
		return field.ErrorList{field.Invalid(p, "bios and efi", "set at most one of bios and efi")}
	}
	if b.BIOS != nil && b.BIOS.UseSerial != nil && *b.BIOS.UseSerial {
		if !serialConsole {
			errs = append(errs, field.Invalid(p.Child("bios", "useSerial"), true, "needs a serial console; autoattachSerialConsole is false"))
		}
		os.BIOS = &OSBIOS{UseSerial: "yes"}
	}
	if efi := b.EFI; efi != nil {
		if efi.Persistent != nil && *efi.Persistent {
			errs = append(errs, field.Forbidden(p.Child("efi", "persistent"), "persistent EFI variables are not supported"))
		}
		// Secure boot (the default) takes the firmware that enforces it with Microsoft's keys
		// enrolled, as KubeVirt does; it needs SMM (validation), which libvirt checks too.
		secure := "yes"
		if efi.SecureBoot != nil && !*efi.SecureBoot {
			secure = "no"
		}
		os.Firmware = "efi"
		os.FirmwareInfo = &FirmwareInfo{Features: []FirmwareFeature{
			{Enabled: secure, Name: "enrolled-keys"},
			{Enabled: secure, Name: "secure-boot"},
		}}
	}
	return errs
}

// KernelBootPaths are the kernel and initrd of kernelBoot inside the pod
// (DisksDir/kernel-boot/{kernel,initrd}); the launcher pod copies them there
// from the kernelBoot container.
func KernelBootPaths(disksDir string) (kernel, initrd string) {
	dir := path.Join(disksDir, KernelBootDir)
	return path.Join(dir, KernelBootKernelFile), path.Join(dir, KernelBootInitrdFile)
}

// convertKernelBoot boots the kernel and initrd of a kernelBoot container
// directly, with the given command line.
func convertKernelBoot(kb *kubevirtv1.KernelBoot, c Context, os *OS, p *field.Path) field.ErrorList {
	if kb == nil {
		return nil
	}
	if kb.Container == nil {
		if kb.KernelArgs != "" {
			return field.ErrorList{field.Invalid(p.Child("kernelArgs"), kb.KernelArgs, "kernel arguments need a kernel (kernelBoot.container)")}
		}
		return nil
	}
	ct := kb.Container
	if ct.KernelPath == "" {
		return field.ErrorList{field.Required(p.Child("container", "kernelPath"), "direct kernel boot needs the kernel's path")}
	}
	kernel, initrd := KernelBootPaths(c.DisksDir)
	os.Kernel = kernel
	if ct.InitrdPath != "" {
		os.Initrd = initrd
	}
	os.Cmdline = kb.KernelArgs
	return nil
}

// convertSysInfo gives the domain UUID and the SMBIOS tables: the firmware
// UUID and serial number, and the chassis.
func convertSysInfo(spec *kubevirtv1.DomainSpec, p *field.Path) (string, *SysInfo, field.ErrorList) {
	system := &SysInfoTable{Entries: []Entry{
		{Name: "manufacturer", Value: smbiosManufacturer},
		{Name: "product", Value: smbiosProduct},
		{Name: "family", Value: smbiosFamily},
	}}
	info := &SysInfo{Type: "smbios", System: system}
	var uuid string
	if fw := spec.Firmware; fw != nil {
		if fw.UUID != "" {
			uuid = strings.ToLower(string(fw.UUID))
			if !isUUID(uuid) {
				return "", nil, field.ErrorList{field.Invalid(p.Child("firmware", "uuid"), fw.UUID, "must be a canonical UUID")}
			}
			system.Entries = append(system.Entries, Entry{Name: "uuid", Value: uuid})
		}
		if fw.Serial != "" {
			system.Entries = append(system.Entries, Entry{Name: "serial", Value: fw.Serial})
		}
	}
	if ch := spec.Chassis; ch != nil {
		for _, e := range []Entry{
			{Name: "manufacturer", Value: ch.Manufacturer},
			{Name: "version", Value: ch.Version},
			{Name: "serial", Value: ch.Serial},
			{Name: "asset", Value: ch.Asset},
			{Name: "sku", Value: ch.Sku},
		} {
			if e.Value == "" {
				continue
			}
			if info.Chassis == nil {
				info.Chassis = &SysInfoTable{}
			}
			info.Chassis.Entries = append(info.Chassis.Entries, e)
		}
	}
	return uuid, info, nil
}

// isUUID reports whether s is a canonical lower-case UUID.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
				return false
			}
		}
	}
	return true
}
