package instancetype

import (
	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// applyFirmwarePreferences chooses the bootloader when the template chooses none, in KubeVirt's
// order (pkg/instancetype/preference/apply/firmware.go):
//
//  1. preferredUseBios (true) gives BIOS when the template has neither BIOS nor EFI;
//  2. preferredUseBiosSerial fills useSerial of a BIOS bootloader (the template's or the one
//     just chosen);
//  3. preferredEfi gives EFI with its settings when there is still neither; it then wins over
//     the deprecated fields below, which are not looked at;
//  4. the deprecated preferredUseEfi (true) gives EFI when there is still neither, and the
//     deprecated preferredUseSecureBoot fills secureBoot of an EFI bootloader, the template's
//     included.
func applyFirmwarePreferences(pref *instancetypev1beta1.VirtualMachinePreferenceSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) {
	p := pref.Firmware
	if p == nil {
		return
	}
	fw := spec.Domain.Firmware
	if fw == nil {
		fw = &kubevirtv1.Firmware{}
	}
	bl := fw.Bootloader
	if bl == nil {
		bl = &kubevirtv1.Bootloader{}
	}
	applyBootloaderPreferences(p, bl)
	if fw.Bootloader == nil && *bl != (kubevirtv1.Bootloader{}) {
		fw.Bootloader = bl
	}
	if spec.Domain.Firmware == nil && *fw != (kubevirtv1.Firmware{}) {
		spec.Domain.Firmware = fw
	}
}

func applyBootloaderPreferences(p *instancetypev1beta1.FirmwarePreferences, bl *kubevirtv1.Bootloader) {
	if p.PreferredUseBios != nil && *p.PreferredUseBios && bl.BIOS == nil && bl.EFI == nil {
		bl.BIOS = &kubevirtv1.BIOS{}
	}
	if p.PreferredUseBiosSerial != nil && bl.BIOS != nil && bl.BIOS.UseSerial == nil {
		bl.BIOS.UseSerial = new(*p.PreferredUseBiosSerial)
	}
	if p.PreferredEfi != nil && bl.BIOS == nil && bl.EFI == nil {
		bl.EFI = p.PreferredEfi.DeepCopy()
		return
	}
	if p.PreferredUseEfi != nil && *p.PreferredUseEfi && bl.BIOS == nil && bl.EFI == nil {
		bl.EFI = &kubevirtv1.EFI{}
	}
	if p.PreferredUseSecureBoot != nil && bl.EFI != nil && bl.EFI.SecureBoot == nil {
		bl.EFI.SecureBoot = new(*p.PreferredUseSecureBoot)
	}
}
