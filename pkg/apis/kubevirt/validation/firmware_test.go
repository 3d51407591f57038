package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestValidateFirmware(t *testing.T) {
	fw := func(f kubevirtv1.Firmware) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		return func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.Domain.Firmware = &f }
	}
	efi := func(e kubevirtv1.EFI) kubevirtv1.Firmware {
		return kubevirtv1.Firmware{Bootloader: &kubevirtv1.Bootloader{EFI: &e}}
	}
	container := func(c kubevirtv1.KernelBootContainer) kubevirtv1.Firmware {
		return kubevirtv1.Firmware{KernelBoot: &kubevirtv1.KernelBoot{Container: &c}}
	}
	runSpecCases(t, []specCase{
		{"uuid", fw(kubevirtv1.Firmware{UUID: "5d307ca9-b3ef-428c-8861-06e72d69f223"}), nil},
		{"bad uuid", fw(kubevirtv1.Firmware{UUID: "not-a-uuid"}), []string{"Invalid:spec.domain.firmware.uuid"}},
		{"urn uuid", fw(kubevirtv1.Firmware{UUID: "urn:uuid:5d307ca9-b3ef-428c-8861-06e72d69f223"}),
			[]string{"Invalid:spec.domain.firmware.uuid"}},
		{"serial", fw(kubevirtv1.Firmware{Serial: "SN-0001 rack 4"}), nil},
		{"serial of 256", fw(kubevirtv1.Firmware{Serial: strings.Repeat("x", 256)}), nil},
		{"serial too long", fw(kubevirtv1.Firmware{Serial: strings.Repeat("x", 257)}), []string{"TooLong:spec.domain.firmware.serial"}},
		{"serial not printable", fw(kubevirtv1.Firmware{Serial: "a\x01b"}), []string{"Invalid:spec.domain.firmware.serial"}},
		{"bios", fw(kubevirtv1.Firmware{Bootloader: &kubevirtv1.Bootloader{BIOS: &kubevirtv1.BIOS{UseSerial: ptr(true)}}}), nil},
		{"efi without secure boot", fw(efi(kubevirtv1.EFI{SecureBoot: ptr(false)})), nil},
		{"efi with default secure boot, without SMM", fw(efi(kubevirtv1.EFI{})),
			[]string{"Invalid:spec.domain.firmware.bootloader.efi.secureBoot"}},
		{"efi with secure boot, SMM off", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			fw(efi(kubevirtv1.EFI{SecureBoot: ptr(true)}))(s)
			s.Domain.Features = &kubevirtv1.Features{SMM: &kubevirtv1.FeatureState{Enabled: ptr(false)}}
		}, []string{"Invalid:spec.domain.firmware.bootloader.efi.secureBoot"}},
		{"efi with secure boot and SMM", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			fw(efi(kubevirtv1.EFI{}))(s)
			s.Domain.Features = &kubevirtv1.Features{SMM: &kubevirtv1.FeatureState{}}
		}, nil},
		{"persistent efi", fw(efi(kubevirtv1.EFI{SecureBoot: ptr(false), Persistent: ptr(true)})),
			[]string{"Forbidden:spec.domain.firmware.bootloader.efi.persistent"}},
		{"bios and efi", fw(kubevirtv1.Firmware{Bootloader: &kubevirtv1.Bootloader{
			BIOS: &kubevirtv1.BIOS{}, EFI: &kubevirtv1.EFI{SecureBoot: ptr(false)}}}),
			[]string{"Invalid:spec.domain.firmware.bootloader"}},
		{"kernel boot", fw(container(kubevirtv1.KernelBootContainer{Image: "example.org/kernel:6.1", KernelPath: "/boot/vmlinuz",
			InitrdPath: "/boot/initrd", ImagePullPolicy: "IfNotPresent"})), nil},
		{"kernel args without kernel", fw(kubevirtv1.Firmware{KernelBoot: &kubevirtv1.KernelBoot{KernelArgs: "console=ttyS0"}}),
			[]string{"Invalid:spec.domain.firmware.kernelBoot.kernelArgs"}},
		{"kernel without image", fw(container(kubevirtv1.KernelBootContainer{KernelPath: "/boot/vmlinuz"})),
			[]string{"Required:spec.domain.firmware.kernelBoot.container.image"}},
		{"kernel without paths", fw(container(kubevirtv1.KernelBootContainer{Image: "k"})),
			[]string{"Required:spec.domain.firmware.kernelBoot.container"}},
		{"relative kernel path", fw(container(kubevirtv1.KernelBootContainer{Image: "k", KernelPath: "boot/vmlinuz"})),
			[]string{"Invalid:spec.domain.firmware.kernelBoot.container.kernelPath"}},
		{"bad pull policy", fw(container(kubevirtv1.KernelBootContainer{Image: "k", InitrdPath: "/i", ImagePullPolicy: "Sometimes"})),
			[]string{"NotSupported:spec.domain.firmware.kernelBoot.container.imagePullPolicy"}},
	})
}

// TestValidateACPI: SLIC and MSDM tables come from secret volumes, named by slicNameRef and msdmNameRef.
func TestValidateACPI(t *testing.T) {
	acpi := func(a kubevirtv1.ACPI, vol kubevirtv1.VolumeSource) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		return func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Firmware = &kubevirtv1.Firmware{ACPI: &a}
			s.Volumes = append(s.Volumes, kubevirtv1.Volume{Name: "tables", VolumeSource: vol})
		}
	}
	secret := kubevirtv1.VolumeSource{Secret: &kubevirtv1.SecretVolumeSource{SecretName: "slic"}}
	runSpecCases(t, []specCase{
		{"slic from a secret volume", acpi(kubevirtv1.ACPI{SlicNameRef: "tables"}, secret), nil},
		{"slic naming no volume", acpi(kubevirtv1.ACPI{SlicNameRef: "other"}, secret), []string{"Invalid:spec.domain.firmware.acpi.slicNameRef"}},
		{"slic from a config map", acpi(kubevirtv1.ACPI{SlicNameRef: "tables"}, kubevirtv1.VolumeSource{
			ConfigMap: &kubevirtv1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}),
			[]string{"Invalid:spec.domain.firmware.acpi.slicNameRef"}},
		{"no table", acpi(kubevirtv1.ACPI{}, secret), []string{"Required:spec.domain.firmware.acpi.slicNameRef"}},
		{"msdm from a secret volume", acpi(kubevirtv1.ACPI{MsdmNameRef: "tables"}, secret), nil},
		{"slic and msdm from one secret volume", acpi(kubevirtv1.ACPI{SlicNameRef: "tables", MsdmNameRef: "tables"}, secret), nil},
		{"msdm naming no volume", acpi(kubevirtv1.ACPI{MsdmNameRef: "other"}, secret), []string{"Invalid:spec.domain.firmware.acpi.msdmNameRef"}},
		{"msdm from a config map", acpi(kubevirtv1.ACPI{MsdmNameRef: "tables"}, kubevirtv1.VolumeSource{
			ConfigMap: &kubevirtv1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}),
			[]string{"Invalid:spec.domain.firmware.acpi.msdmNameRef"}},
	})
}
