package v1

import "k8s.io/apimachinery/pkg/runtime"

// Defaults applied by the API server on every decode. They mirror what
// KubeVirt's mutating webhook fills in, minus what depends on the cluster
// or the node: the CPU topology stays unset (the node side computes it) and
// the firmware UUID is derived by the registry from namespace and name.

// DefaultMachineType is the machine type given to guests that name none.
const DefaultMachineType = "q35"

// DefaultNetworkName is the name of the pod network (and of its interface)
// added to guests that declare no networking at all.
const DefaultNetworkName = "default"

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_VirtualMachine gives a VM's template an instance's defaults, unless the VM names a
// preference: a preference fills what the template leaves unset (disk buses, the machine type,
// the pod interface, ...), which a default set here would pre-empt. KubeVirt does not default
// VM templates either; the instance created from the template is defaulted in any case.
//
// +k8s:defaulter-gen=covers
func SetDefaults_VirtualMachine(obj *VirtualMachine) {
	if obj.Spec.Template == nil || obj.Spec.Preference != nil {
		return
	}
	DefaultInstanceSpec(&obj.Spec.Template.Spec)
}

// DefaultInstanceSpec applies an instance's defaults to spec.
func DefaultInstanceSpec(spec *VirtualMachineInstanceSpec) {
	vmi := VirtualMachineInstance{Spec: *spec}
	SetObjectDefaults_VirtualMachineInstance(&vmi)
	*spec = vmi.Spec
}

// SetDefaults_DomainSpec gives the domain the default machine type when it has none.
func SetDefaults_DomainSpec(obj *DomainSpec) {
	if obj.Machine == nil {
		obj.Machine = &Machine{}
	}
	if obj.Machine.Type == "" {
		obj.Machine.Type = DefaultMachineType
	}
}

// SetDefaults_Disk presents a disk without a device type as a virtio disk
// and fills in the bus of each device type: virtio for disks, sata for
// CD-ROMs, scsi for LUNs. CD-ROMs default to read-only with a closed tray.
func SetDefaults_Disk(obj *Disk) {
	if obj.Disk == nil && obj.LUN == nil && obj.CDRom == nil {
		obj.Disk = &DiskTarget{}
	}
	if obj.Disk != nil && obj.Disk.Bus == "" {
		obj.Disk.Bus = DiskBusVirtio
	}
	if obj.LUN != nil && obj.LUN.Bus == "" {
		obj.LUN.Bus = DiskBusSCSI
	}
	if obj.CDRom != nil {
		if obj.CDRom.Bus == "" {
			obj.CDRom.Bus = DiskBusSATA
		}
		if obj.CDRom.ReadOnly == nil {
			readOnly := true
			obj.CDRom.ReadOnly = &readOnly
		}
		if obj.CDRom.Tray == "" {
			obj.CDRom.Tray = TrayStateClosed
		}
	}
}

// SetDefaults_Interface gives an interface with neither a built-in binding
// method nor a binding plugin the masquerade binding.
func SetDefaults_Interface(obj *Interface) {
	if obj.Binding == nil && obj.InterfaceBindingMethod == (InterfaceBindingMethod{}) {
		obj.Masquerade = &InterfaceMasquerade{}
	}
}

// SetDefaults_Input fills in the bus (usb) and type (tablet) of an input device.
func SetDefaults_Input(obj *Input) {
	if obj.Bus == "" {
		obj.Bus = InputBusUSB
	}
	if obj.Type == "" {
		obj.Type = InputTypeTablet
	}
}

// SetDefaults_Probe fills in the timing of a probe as pods do.
func SetDefaults_Probe(obj *Probe) {
	if obj.TimeoutSeconds < 1 {
		obj.TimeoutSeconds = 1
	}
	if obj.PeriodSeconds < 1 {
		obj.PeriodSeconds = 10
	}
	if obj.SuccessThreshold < 1 {
		obj.SuccessThreshold = 1
	}
	if obj.FailureThreshold < 1 {
		obj.FailureThreshold = 3
	}
}

// SetDefaults_VirtualMachineInstanceSpec gives every volume that no disk
// names a disk of its own (as KubeVirt does, so a volume is never silently
// left out of the guest), and connects a guest that declares no interfaces
// and no networks to the pod network through a masquerade interface, unless
// autoattachPodInterface is false.
func SetDefaults_VirtualMachineInstanceSpec(obj *VirtualMachineInstanceSpec) {
	devices := &obj.Domain.Devices
	setDefaultVolumeDisks(obj)
	if len(devices.Interfaces) != 0 || len(obj.Networks) != 0 {
		return
	}
	if devices.AutoattachPodInterface != nil && !*devices.AutoattachPodInterface {
		return
	}
	obj.Networks = []Network{{Name: DefaultNetworkName, NetworkSource: NetworkSource{Pod: &PodNetwork{}}}}
	devices.Interfaces = []Interface{{
		Name:                   DefaultNetworkName,
		InterfaceBindingMethod: InterfaceBindingMethod{Masquerade: &InterfaceMasquerade{}},
	}}
}

// setDefaultVolumeDisks appends a disk (defaulted later to a virtio disk) for
// each volume without one. Hotplugged and memory dump volumes are not disks
// of the guest at boot and are left alone, and so are the secrets that carry
// ACPI tables (firmware.acpi), which reach the guest as those tables.
func setDefaultVolumeDisks(obj *VirtualMachineInstanceSpec) {
	named := make(map[string]bool, len(obj.Domain.Devices.Disks))
	for _, d := range obj.Domain.Devices.Disks {
		named[d.Name] = true
	}
	for _, v := range obj.Volumes {
		if v.Name == "" || named[v.Name] || v.MemoryDump != nil || IsACPITableVolume(obj, v.Name) ||
			(v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.Hotpluggable) {
			continue
		}
		obj.Domain.Devices.Disks = append(obj.Domain.Devices.Disks, Disk{Name: v.Name})
		named[v.Name] = true
	}
}
