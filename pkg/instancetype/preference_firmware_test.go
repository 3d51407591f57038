package instancetype

import (
	"testing"

	v1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func bootloaderSpec(bl *kubevirtv1.Bootloader) kubevirtv1.VirtualMachineInstanceSpec {
	return kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{Bootloader: bl}}}
}

func firmwarePref(f v1beta1.FirmwarePreferences) v1beta1.VirtualMachinePreferenceSpec {
	return v1beta1.VirtualMachinePreferenceSpec{Firmware: &f}
}

func TestFirmwarePreferences(t *testing.T) {
	efi := &kubevirtv1.EFI{SecureBoot: new(false), Persistent: new(true)}
	runPrefCases(t, []prefCase{
		{
			name: "bios with serial", pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredUseBios: new(true), PreferredUseBiosSerial: new(true)}),
			want: bootloaderSpec(&kubevirtv1.Bootloader{BIOS: &kubevirtv1.BIOS{UseSerial: new(true)}}),
		},
		{name: "bios false chooses nothing", pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredUseBios: new(false)})},
		{
			name: "bios serial fills the template's bios", pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredUseBiosSerial: new(true)}),
			spec: bootloaderSpec(&kubevirtv1.Bootloader{BIOS: &kubevirtv1.BIOS{}}),
			want: bootloaderSpec(&kubevirtv1.Bootloader{BIOS: &kubevirtv1.BIOS{UseSerial: new(true)}}),
		},
		{
			name: "bios serial kept", pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredUseBiosSerial: new(true)}),
			spec: bootloaderSpec(&kubevirtv1.Bootloader{BIOS: &kubevirtv1.BIOS{UseSerial: new(false)}}),
			want: bootloaderSpec(&kubevirtv1.Bootloader{BIOS: &kubevirtv1.BIOS{UseSerial: new(false)}}),
		},
		{
			name: "bios not over the template's efi", pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredUseBios: new(true)}),
			spec: bootloaderSpec(&kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{}}),
			want: bootloaderSpec(&kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{}}),
		},
		{
			name: "preferredEfi", pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredEfi: efi}),
			want: bootloaderSpec(&kubevirtv1.Bootloader{EFI: efi}),
		},
		{
			name: "preferredEfi wins over the deprecated fields",
			pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredEfi: &kubevirtv1.EFI{}, PreferredUseEfi: new(true), PreferredUseSecureBoot: new(true)}),
			want: bootloaderSpec(&kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{}}),
		},
		{
			name: "bios wins over preferredEfi", pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredUseBios: new(true), PreferredEfi: efi}),
			want: bootloaderSpec(&kubevirtv1.Bootloader{BIOS: &kubevirtv1.BIOS{}}),
		},
		{
			name: "deprecated efi with secure boot", pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredUseEfi: new(true), PreferredUseSecureBoot: new(true)}),
			want: bootloaderSpec(&kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{SecureBoot: new(true)}}),
		},
		{
			name: "deprecated secure boot fills the template's efi even with preferredEfi",
			pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredEfi: efi, PreferredUseSecureBoot: new(true)}),
			spec: bootloaderSpec(&kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{}}),
			want: bootloaderSpec(&kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{SecureBoot: new(true)}}),
		},
		{
			name: "secure boot kept", pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredUseSecureBoot: new(true)}),
			spec: bootloaderSpec(&kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{SecureBoot: new(false)}}),
			want: bootloaderSpec(&kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{SecureBoot: new(false)}}),
		},
		{
			name: "the template's other firmware settings stay",
			pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredEfi: efi}),
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{Serial: "s1"}}},
			want: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{
				Serial: "s1", Bootloader: &kubevirtv1.Bootloader{EFI: efi}}}},
		},
		{
			name: "an empty firmware block is kept as it is",
			pref: firmwarePref(v1beta1.FirmwarePreferences{}),
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{}}},
			want: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{}}},
		},
		{name: "no choice leaves no firmware block", pref: firmwarePref(v1beta1.FirmwarePreferences{PreferredUseBiosSerial: new(true)})},
	})
}
