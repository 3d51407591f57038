package instancetype

import (
	"testing"

	v1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func devicesSpec(d kubevirtv1.Devices) kubevirtv1.VirtualMachineInstanceSpec {
	return kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Devices: d}}
}

func devicesPref(d v1beta1.DevicePreferences) v1beta1.VirtualMachinePreferenceSpec {
	return v1beta1.VirtualMachinePreferenceSpec{Devices: &d}
}

func TestDeviceTogglePreferences(t *testing.T) {
	all := devicesPref(v1beta1.DevicePreferences{
		PreferredAutoattachGraphicsDevice:   new(false),
		PreferredAutoattachMemBalloon:       new(false),
		PreferredAutoattachPodInterface:     new(false),
		PreferredAutoattachSerialConsole:    new(false),
		PreferredAutoattachInputDevice:      new(true),
		PreferredUseVirtioTransitional:      new(true),
		PreferredBlockMultiQueue:            new(true),
		PreferredNetworkInterfaceMultiQueue: new(true),
		PreferredDisableHotplug:             new(true),
		PreferredSoundModel:                 "ac97",
		PreferredRng:                        &kubevirtv1.Rng{},
		PreferredTPM:                        &kubevirtv1.TPMDevice{Persistent: new(true)},
	})
	set := kubevirtv1.Devices{
		AutoattachGraphicsDevice:   new(true),
		AutoattachMemBalloon:       new(true),
		AutoattachPodInterface:     new(true),
		AutoattachSerialConsole:    new(true),
		AutoattachInputDevice:      new(false),
		UseVirtioTransitional:      new(false),
		BlockMultiQueue:            new(false),
		NetworkInterfaceMultiQueue: new(false),
		DisableHotplug:             true,
		Sound:                      &kubevirtv1.SoundDevice{Name: "audio", Model: "ich9"},
		Rng:                        &kubevirtv1.Rng{},
		TPM:                        &kubevirtv1.TPMDevice{Enabled: new(false)},
	}
	runPrefCases(t, []prefCase{
		{
			name: "filled where unset", pref: all,
			spec: devicesSpec(kubevirtv1.Devices{Sound: &kubevirtv1.SoundDevice{Name: "audio"}}),
			want: devicesSpec(kubevirtv1.Devices{
				AutoattachGraphicsDevice:   new(false),
				AutoattachMemBalloon:       new(false),
				AutoattachPodInterface:     new(false),
				AutoattachSerialConsole:    new(false),
				AutoattachInputDevice:      new(true),
				UseVirtioTransitional:      new(true),
				BlockMultiQueue:            new(true),
				NetworkInterfaceMultiQueue: new(true),
				DisableHotplug:             true,
				Sound:                      &kubevirtv1.SoundDevice{Name: "audio", Model: "ac97"},
				Rng:                        &kubevirtv1.Rng{},
				TPM:                        &kubevirtv1.TPMDevice{Persistent: new(true)},
			}),
		},
		{name: "never override what the template sets", pref: all, spec: devicesSpec(set), want: devicesSpec(set)},
		{
			name: "a preferred sound model adds no sound device",
			pref: devicesPref(v1beta1.DevicePreferences{PreferredSoundModel: "ac97"}),
		},
		{
			name: "disableHotplug false does not re-enable hotplug",
			pref: devicesPref(v1beta1.DevicePreferences{PreferredDisableHotplug: new(false)}),
			spec: devicesSpec(kubevirtv1.Devices{DisableHotplug: true}),
			want: devicesSpec(kubevirtv1.Devices{DisableHotplug: true}),
		},
	})
}

func TestDiskPreferences(t *testing.T) {
	blockSize := &kubevirtv1.BlockSize{Custom: &kubevirtv1.CustomBlockSize{Logical: 512, Physical: 4096}}
	pref := devicesPref(v1beta1.DevicePreferences{
		PreferredDiskBus:               kubevirtv1.DiskBusVirtio,
		PreferredCdromBus:              kubevirtv1.DiskBusSCSI,
		PreferredLunBus:                kubevirtv1.DiskBusSATA,
		PreferredDiskCache:             kubevirtv1.CacheWriteBack,
		PreferredDiskIO:                kubevirtv1.IONative,
		PreferredDiskBlockSize:         blockSize,
		PreferredDiskDedicatedIoThread: new(true),
	})
	filled := func(name string, bus kubevirtv1.DiskBus, dedicated *bool) kubevirtv1.Disk {
		return kubevirtv1.Disk{
			Name: name, DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: bus}},
			Cache: kubevirtv1.CacheWriteBack, IO: kubevirtv1.IONative, BlockSize: blockSize, DedicatedIOThread: dedicated,
		}
	}
	mine := kubevirtv1.Disk{
		Name: "mine", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}},
		Cache: kubevirtv1.CacheNone, IO: kubevirtv1.IOThreads, BlockSize: &kubevirtv1.BlockSize{MatchVolume: &kubevirtv1.FeatureState{}},
		DedicatedIOThread: new(false),
	}
	runPrefCases(t, []prefCase{
		{
			name: "every kind of disk", pref: pref,
			spec: devicesSpec(kubevirtv1.Devices{Disks: []kubevirtv1.Disk{
				{Name: "no-device"},
				{Name: "disk", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{}}},
				{Name: "sata", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusSATA}}},
				{Name: "cdrom", DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{}}},
				{Name: "lun", DiskDevice: kubevirtv1.DiskDevice{LUN: &kubevirtv1.LunTarget{}}},
				{Name: "cdrom-bus", DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{Bus: kubevirtv1.DiskBusSATA}}},
				{Name: "lun-bus", DiskDevice: kubevirtv1.DiskDevice{LUN: &kubevirtv1.LunTarget{Bus: kubevirtv1.DiskBusSCSI}}},
				mine,
			}}),
			want: devicesSpec(kubevirtv1.Devices{Disks: []kubevirtv1.Disk{
				filled("no-device", kubevirtv1.DiskBusVirtio, new(true)),
				filled("disk", kubevirtv1.DiskBusVirtio, new(true)),
				// A dedicated IO thread only for virtio disks.
				filled("sata", kubevirtv1.DiskBusSATA, nil),
				// CD-ROMs and LUNs take only their bus.
				{Name: "cdrom", DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{Bus: kubevirtv1.DiskBusSCSI}}},
				{Name: "lun", DiskDevice: kubevirtv1.DiskDevice{LUN: &kubevirtv1.LunTarget{Bus: kubevirtv1.DiskBusSATA}}},
				{Name: "cdrom-bus", DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{Bus: kubevirtv1.DiskBusSATA}}},
				{Name: "lun-bus", DiskDevice: kubevirtv1.DiskDevice{LUN: &kubevirtv1.LunTarget{Bus: kubevirtv1.DiskBusSCSI}}},
				mine,
			}}),
		},
		{
			name: "no dedicated IO thread for a disk without a bus",
			pref: devicesPref(v1beta1.DevicePreferences{PreferredDiskDedicatedIoThread: new(true)}),
			spec: devicesSpec(kubevirtv1.Devices{Disks: []kubevirtv1.Disk{{Name: "d"}}}),
			want: devicesSpec(kubevirtv1.Devices{Disks: []kubevirtv1.Disk{{Name: "d", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{}}}}}),
		},
	})
}

func TestInterfaceAndInputPreferences(t *testing.T) {
	pod := kubevirtv1.Network{Name: "pod", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}}
	multus := kubevirtv1.Network{Name: "blue", NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "blue"}}}
	pref := devicesPref(v1beta1.DevicePreferences{
		PreferredInterfaceModel:      "e1000e",
		PreferredInterfaceMasquerade: &kubevirtv1.InterfaceMasquerade{},
		PreferredInputBus:            kubevirtv1.InputBusVirtio,
		PreferredInputType:           kubevirtv1.InputTypeKeyboard,
	})
	bridge := kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}
	masquerade := kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}}
	runPrefCases(t, []prefCase{{
		name: "interfaces and inputs", pref: pref,
		spec: kubevirtv1.VirtualMachineInstanceSpec{
			Networks: []kubevirtv1.Network{pod, multus},
			Domain: kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{
				Interfaces: []kubevirtv1.Interface{
					{Name: "pod"},
					{Name: "blue"},
					{Name: "orphan"},
					{Name: "pod-bridge", Model: "virtio", InterfaceBindingMethod: bridge},
					{Name: "pod-plugin", Binding: &kubevirtv1.PluginBinding{Name: "passt"}},
				},
				Inputs: []kubevirtv1.Input{{Name: "tablet"}, {Name: "mine", Bus: kubevirtv1.InputBusUSB, Type: kubevirtv1.InputTypeTablet}},
			}},
		},
		want: kubevirtv1.VirtualMachineInstanceSpec{
			Networks: []kubevirtv1.Network{pod, multus},
			Domain: kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{
				Interfaces: []kubevirtv1.Interface{
					// Masquerade only on the pod network and only without a binding.
					{Name: "pod", Model: "e1000e", InterfaceBindingMethod: masquerade},
					{Name: "blue", Model: "e1000e"},
					{Name: "orphan", Model: "e1000e"},
					{Name: "pod-bridge", Model: "virtio", InterfaceBindingMethod: bridge},
					{Name: "pod-plugin", Model: "e1000e", Binding: &kubevirtv1.PluginBinding{Name: "passt"}},
				},
				Inputs: []kubevirtv1.Input{
					{Name: "tablet", Bus: kubevirtv1.InputBusVirtio, Type: kubevirtv1.InputTypeKeyboard},
					{Name: "mine", Bus: kubevirtv1.InputBusUSB, Type: kubevirtv1.InputTypeTablet},
				},
			}},
		},
	}})
}

func TestPanicDevicePreferences(t *testing.T) {
	pref := devicesPref(v1beta1.DevicePreferences{PreferredPanicDeviceModel: new(kubevirtv1.Isa)})
	runPrefCases(t, []prefCase{
		{name: "no panic device is added", pref: pref},
		{
			name: "the model fills devices without one", pref: pref,
			spec: devicesSpec(kubevirtv1.Devices{PanicDevices: []kubevirtv1.PanicDevice{{Model: new(kubevirtv1.Hyperv)}, {}}}),
			want: devicesSpec(kubevirtv1.Devices{PanicDevices: []kubevirtv1.PanicDevice{{Model: new(kubevirtv1.Hyperv)}, {Model: new(kubevirtv1.Isa)}}}),
		},
	})
}
