package validation

import (
	"path"
	"regexp"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// maxSerialLength bounds the SMBIOS serial number; libvirt and guests handle short strings.
const maxSerialLength = 256

// uuidPattern is the canonical 8-4-4-4-12 hexadecimal form of a UUID, the only form libvirt
// takes for a domain's SMBIOS UUID.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// validateFirmware checks the UUID, serial, bootloader choice and direct kernel boot. Persistent
// EFI variables are refused by the unsupported table; ACPI tables are validateACPI's.
func validateFirmware(fw *kubevirtv1.Firmware, fldPath *field.Path) field.ErrorList {
	if fw == nil {
		return nil
	}
	var errs field.ErrorList
	if fw.UUID != "" && !uuidPattern.MatchString(string(fw.UUID)) {
		errs = append(errs, field.Invalid(fldPath.Child("uuid"), string(fw.UUID),
			"must be a UUID in the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"))
	}
	errs = append(errs, validateSerial(fw.Serial, fldPath.Child("serial"))...)
	if bl := fw.Bootloader; bl != nil && bl.BIOS != nil && bl.EFI != nil {
		errs = append(errs, field.Invalid(fldPath.Child("bootloader"), "bios, efi", "at most one of bios and efi may be set"))
	}
	errs = append(errs, validateKernelBoot(fw.KernelBoot, fldPath.Child("kernelBoot"))...)
	return errs
}

// validateSecureBoot requires SMM for UEFI secure boot, as KubeVirt does: an efi bootloader has
// secure boot unless secureBoot is false, and the secure firmware needs the guest's System
// Management Mode.
func validateSecureBoot(domain *kubevirtv1.DomainSpec, path *field.Path) field.ErrorList {
	fw := domain.Firmware
	if fw == nil || fw.Bootloader == nil || fw.Bootloader.EFI == nil {
		return nil
	}
	if sb := fw.Bootloader.EFI.SecureBoot; sb != nil && !*sb {
		return nil
	}
	if f := domain.Features; f != nil && f.SMM != nil && (f.SMM.Enabled == nil || *f.SMM.Enabled) {
		return nil
	}
	return field.ErrorList{field.Invalid(path.Child("firmware", "bootloader", "efi", "secureBoot"), true,
		"UEFI secure boot (the default of efi) needs SMM: set spec.domain.features.smm.enabled to true, or secureBoot to false")}
}

// validateACPI requires each ACPI table's reference to name a secret volume, as KubeVirt does:
// the guest's SLIC table is that secret's slic.bin, its MSDM table the secret's msdm.bin.
func validateACPI(spec *kubevirtv1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	fw := spec.Domain.Firmware
	if fw == nil || fw.ACPI == nil {
		return nil
	}
	p := fldPath.Child("domain", "firmware", "acpi")
	if fw.ACPI.SlicNameRef == "" && fw.ACPI.MsdmNameRef == "" {
		return field.ErrorList{field.Required(p.Child("slicNameRef"), "acpi needs a table: slicNameRef or msdmNameRef names a secret volume holding slic.bin or msdm.bin")}
	}
	var errs field.ErrorList
	for _, t := range []struct{ field, ref, file string }{
		{"slicNameRef", fw.ACPI.SlicNameRef, "slic.bin"},
		{"msdmNameRef", fw.ACPI.MsdmNameRef, "msdm.bin"},
	} {
		if t.ref != "" {
			errs = append(errs, validateACPITableVolume(spec.Volumes, t.ref, t.file, p.Child(t.field))...)
		}
	}
	return errs
}

// validateACPITableVolume requires ref to name a secret volume (holding file).
func validateACPITableVolume(volumes []kubevirtv1.Volume, ref, file string, p *field.Path) field.ErrorList {
	for _, v := range volumes {
		if v.Name == ref {
			if v.Secret == nil {
				return field.ErrorList{field.Invalid(p, ref, "must name a volume of type secret (holding "+file+")")}
			}
			return nil
		}
	}
	return field.ErrorList{field.Invalid(p, ref, "names no volume: it must name a secret volume holding "+file)}
}

// validateSerial allows a printable serial number of at most maxSerialLength characters.
func validateSerial(serial string, fldPath *field.Path) field.ErrorList {
	return validatePrintable(serial, maxSerialLength, unicode.IsPrint, "printable characters", fldPath)
}

// validatePrintable allows at most max bytes of characters that ok accepts (named by what).
func validatePrintable(value string, max int, ok func(rune) bool, what string, fldPath *field.Path) field.ErrorList {
	if len(value) > max {
		return field.ErrorList{field.TooLong(fldPath, value, max)}
	}
	for _, r := range value {
		if !ok(r) {
			return field.ErrorList{field.Invalid(fldPath, value, "must contain only "+what)}
		}
	}
	return nil
}

// validateKernelBoot requires an image and a kernel or initrd path when a kernel is taken
// from a container, and refuses kernel arguments without such a kernel.
func validateKernelBoot(kb *kubevirtv1.KernelBoot, fldPath *field.Path) field.ErrorList {
	if kb == nil {
		return nil
	}
	var errs field.ErrorList
	if kb.Container == nil {
		if kb.KernelArgs != "" {
			errs = append(errs, field.Invalid(fldPath.Child("kernelArgs"), kb.KernelArgs,
				"kernel arguments need a kernel: set kernelBoot.container"))
		}
		return errs
	}
	c := kb.Container
	cPath := fldPath.Child("container")
	if c.Image == "" {
		errs = append(errs, field.Required(cPath.Child("image"), ""))
	}
	if c.KernelPath == "" && c.InitrdPath == "" {
		errs = append(errs, field.Required(cPath, "at least one of kernelPath and initrdPath must be set"))
	}
	for _, p := range []struct{ name, value string }{{"kernelPath", c.KernelPath}, {"initrdPath", c.InitrdPath}} {
		if p.value != "" && !path.IsAbs(p.value) {
			errs = append(errs, field.Invalid(cPath.Child(p.name), p.value, "must be an absolute path"))
		}
	}
	errs = append(errs, validatePullPolicy(c.ImagePullPolicy, cPath.Child("imagePullPolicy"))...)
	return errs
}
