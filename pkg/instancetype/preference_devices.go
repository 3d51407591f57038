package instancetype

import (
	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// applyDevicePreferences fills the devices' unset settings with the preferred ones, as KubeVirt's
// pkg/instancetype/preference/apply/device.go does.
//
// disableHotplug is a plain bool, so an unset value cannot be told from false. KubeVirt 1.7
// overwrites it with the preference (a FIXME there); here only false is treated as unset, so a
// preference can turn hotplug off but never turn it back on for a template that turned it off.
//
// The preferred sound model goes to a sound device the template has without a model; it does not
// add a device. The preferred panic device model likewise goes only to the template's panic
// devices without a model (KubeVirt 1.7; later releases add a device).
//
// preferredVirtualGPUOptions is not applied: KubeVirt 1.7 never applies it either (its GPUs come
// from the template or the instance type, whole).
func applyDevicePreferences(pref *instancetypev1beta1.VirtualMachinePreferenceSpec, spec *kubevirtv1.VirtualMachineInstanceSpec) {
	p := pref.Devices
	if p == nil {
		return
	}
	d := &spec.Domain.Devices
	fillBool(&d.AutoattachGraphicsDevice, p.PreferredAutoattachGraphicsDevice)
	fillBool(&d.AutoattachMemBalloon, p.PreferredAutoattachMemBalloon)
	fillBool(&d.AutoattachPodInterface, p.PreferredAutoattachPodInterface)
	fillBool(&d.AutoattachSerialConsole, p.PreferredAutoattachSerialConsole)
	fillBool(&d.AutoattachInputDevice, p.PreferredAutoattachInputDevice)
	fillBool(&d.UseVirtioTransitional, p.PreferredUseVirtioTransitional)
	fillBool(&d.BlockMultiQueue, p.PreferredBlockMultiQueue)
	fillBool(&d.NetworkInterfaceMultiQueue, p.PreferredNetworkInterfaceMultiQueue)
	if p.PreferredDisableHotplug != nil && !d.DisableHotplug {
		d.DisableHotplug = *p.PreferredDisableHotplug
	}
	if p.PreferredSoundModel != "" && d.Sound != nil && d.Sound.Model == "" {
		d.Sound.Model = p.PreferredSoundModel
	}
	if p.PreferredRng != nil && d.Rng == nil {
		d.Rng = p.PreferredRng.DeepCopy()
	}
	// A template's tpm with enabled: false is set, so it keeps a preferred TPM away.
	if p.PreferredTPM != nil && d.TPM == nil {
		d.TPM = p.PreferredTPM.DeepCopy()
	}
	applyDiskPreferences(p, d)
	applyInterfacePreferences(p, spec)
	applyInputPreferences(p, d)
	if p.PreferredPanicDeviceModel != nil {
		for i := range d.PanicDevices {
			if d.PanicDevices[i].Model == nil {
				d.PanicDevices[i].Model = new(*p.PreferredPanicDeviceModel)
			}
		}
	}
}

// fillBool sets *target to a copy of *preferred when the template leaves it unset.
func fillBool(target **bool, preferred *bool) {
	if preferred != nil && *target == nil {
		*target = new(*preferred)
	}
}

// applyDiskPreferences fills the disks' buses and settings (KubeVirt's
// pkg/instancetype/preference/apply/disk.go). A disk that names no device type becomes a disk,
// as defaulting would make it, so that the disk preferences apply to it. The cache, IO, block
// size and dedicated IO thread preferences are for disks only, not CD-ROMs or LUNs; a dedicated
// IO thread only for a disk whose bus is virtio once the preferred bus is in (a disk with no bus
// at all does not get one, as in KubeVirt).
func applyDiskPreferences(p *instancetypev1beta1.DevicePreferences, d *kubevirtv1.Devices) {
	for i := range d.Disks {
		disk := &d.Disks[i]
		if disk.Disk == nil && disk.CDRom == nil && disk.LUN == nil {
			disk.Disk = &kubevirtv1.DiskTarget{}
		}
		switch {
		case disk.Disk != nil:
			if p.PreferredDiskBus != "" && disk.Disk.Bus == "" {
				disk.Disk.Bus = p.PreferredDiskBus
			}
			if p.PreferredDiskBlockSize != nil && disk.BlockSize == nil {
				disk.BlockSize = p.PreferredDiskBlockSize.DeepCopy()
			}
			if p.PreferredDiskCache != "" && disk.Cache == "" {
				disk.Cache = p.PreferredDiskCache
			}
			if p.PreferredDiskIO != "" && disk.IO == "" {
				disk.IO = p.PreferredDiskIO
			}
			if p.PreferredDiskDedicatedIoThread != nil && disk.DedicatedIOThread == nil && disk.Disk.Bus == kubevirtv1.DiskBusVirtio {
				disk.DedicatedIOThread = new(*p.PreferredDiskDedicatedIoThread)
			}
		case disk.CDRom != nil:
			if p.PreferredCdromBus != "" && disk.CDRom.Bus == "" {
				disk.CDRom.Bus = p.PreferredCdromBus
			}
		case disk.LUN != nil:
			if p.PreferredLunBus != "" && disk.LUN.Bus == "" {
				disk.LUN.Bus = p.PreferredLunBus
			}
		}
	}
}

// applyInterfacePreferences fills the interfaces' models, and gives the masquerade binding to an
// interface on the pod network that has neither a binding method nor a binding plugin
// (KubeVirt's pkg/instancetype/preference/apply/interface.go).
func applyInterfacePreferences(p *instancetypev1beta1.DevicePreferences, spec *kubevirtv1.VirtualMachineInstanceSpec) {
	for i := range spec.Domain.Devices.Interfaces {
		iface := &spec.Domain.Devices.Interfaces[i]
		if p.PreferredInterfaceModel != "" && iface.Model == "" {
			iface.Model = p.PreferredInterfaceModel
		}
		if p.PreferredInterfaceMasquerade != nil && iface.InterfaceBindingMethod == (kubevirtv1.InterfaceBindingMethod{}) &&
			iface.Binding == nil && onPodNetwork(iface.Name, spec.Networks) {
			iface.Masquerade = p.PreferredInterfaceMasquerade.DeepCopy()
		}
	}
}

// onPodNetwork reports whether the network the interface attaches to is the pod network.
func onPodNetwork(name string, networks []kubevirtv1.Network) bool {
	for _, n := range networks {
		if n.Name == name {
			return n.Pod != nil
		}
	}
	return false
}

// applyInputPreferences fills the input devices' buses and types.
func applyInputPreferences(p *instancetypev1beta1.DevicePreferences, d *kubevirtv1.Devices) {
	for i := range d.Inputs {
		in := &d.Inputs[i]
		if p.PreferredInputBus != "" && in.Bus == "" {
			in.Bus = p.PreferredInputBus
		}
		if p.PreferredInputType != "" && in.Type == "" {
			in.Type = p.PreferredInputType
		}
	}
}
