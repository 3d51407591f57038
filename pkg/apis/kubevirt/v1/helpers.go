package v1

// PodNetworkInterface returns the interface attached to the instance's pod network, or nil when
// it has none (validation allows one pod network). It is the interface whose declared ports the
// launcher pod forwards to the guest, and the one probes without a host reach the guest through.
func PodNetworkInterface(spec *VirtualMachineInstanceSpec) *Interface {
	if spec == nil {
		return nil
	}
	for i := range spec.Networks {
		if spec.Networks[i].Pod == nil {
			continue
		}
		for j := range spec.Domain.Devices.Interfaces {
			if spec.Domain.Devices.Interfaces[j].Name == spec.Networks[i].Name {
				return &spec.Domain.Devices.Interfaces[j]
			}
		}
	}
	return nil
}

// IsConfigVolume reports whether the source is a config volume: a configMap, secret,
// serviceAccount, downwardAPI or sysprep volume, which reaches the guest as a disk built from
// its files.
func IsConfigVolume(s *VolumeSource) bool {
	return s.ConfigMap != nil || s.Secret != nil || s.ServiceAccount != nil || s.DownwardAPI != nil || s.Sysprep != nil
}

// IsACPITableVolume reports whether volume carries one of the guest's ACPI tables
// (spec.domain.firmware.acpi): it reaches the guest as that table, not as a disk.
func IsACPITableVolume(spec *VirtualMachineInstanceSpec, volume string) bool {
	fw := spec.Domain.Firmware
	return volume != "" && fw != nil && fw.ACPI != nil && (fw.ACPI.SlicNameRef == volume || fw.ACPI.MsdmNameRef == volume)
}

// IsHotpluggableVolume reports whether v is a claim or DataVolume marked hotpluggable: one that
// addvolume plugged in (or may plug in) and removevolume may take out of a running guest.
func IsHotpluggableVolume(v *Volume) bool {
	return (v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.Hotpluggable) ||
		(v.DataVolume != nil && v.DataVolume.Hotpluggable)
}
