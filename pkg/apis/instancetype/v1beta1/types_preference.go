package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// VirtualMachinePreference is a namespaced preference: defaults for the VirtualMachines of its
// namespace that reference it. A preference only fills what a VirtualMachine leaves unset.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachinePreference struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec holds the preferred values.
	Spec VirtualMachinePreferenceSpec `json:"spec"`
}

// VirtualMachinePreferenceList is a list of VirtualMachinePreferences.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachinePreferenceList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the preferences of the list.
	Items []VirtualMachinePreference `json:"items"`
}

// VirtualMachineClusterPreference is a cluster-wide preference, usable by VirtualMachines of every
// namespace.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineClusterPreference struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec holds the preferred values.
	Spec VirtualMachinePreferenceSpec `json:"spec"`
}

// VirtualMachineClusterPreferenceList is a list of VirtualMachineClusterPreferences.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineClusterPreferenceList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the cluster preferences of the list.
	Items []VirtualMachineClusterPreference `json:"items"`
}

// VirtualMachinePreferenceSpec holds the values a preference offers.
type VirtualMachinePreferenceSpec struct {
	// Clock preferences.
	// +optional
	Clock *ClockPreferences `json:"clock,omitempty"`
	// CPU preferences: how the vCPUs are laid out.
	// +optional
	CPU *CPUPreferences `json:"cpu,omitempty"`
	// Devices preferences: buses, models and which devices are attached.
	// +optional
	Devices *DevicePreferences `json:"devices,omitempty"`
	// Features preferences (ACPI, APIC, Hyper-V, ...).
	// +optional
	Features *FeaturePreferences `json:"features,omitempty"`
	// Firmware preferences (BIOS or EFI, secure boot).
	// +optional
	Firmware *FirmwarePreferences `json:"firmware,omitempty"`
	// Machine preferences.
	// +optional
	Machine *MachinePreferences `json:"machine,omitempty"`
	// Volumes preferences.
	// +optional
	Volumes *VolumePreferences `json:"volumes,omitempty"`
	// PreferredSubdomain is the instance's subdomain.
	// +optional
	PreferredSubdomain *string `json:"preferredSubdomain,omitempty"`
	// PreferredTerminationGracePeriodSeconds is the instance's grace period.
	// +optional
	PreferredTerminationGracePeriodSeconds *int64 `json:"preferredTerminationGracePeriodSeconds,omitempty"`
	// Requirements the instance type (or the VirtualMachine) must meet.
	// +optional
	Requirements *PreferenceRequirements `json:"requirements,omitempty"`
	// Annotations are added to the instance where it has none of the same key.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// PreferSpreadSocketToCoreRatio is the socket to core ratio of the spread topology
	// (deprecated: cpu.spreadOptions.ratio).
	// +optional
	PreferSpreadSocketToCoreRatio int32 `json:"preferSpreadSocketToCoreRatio,omitempty"`
	// PreferredArchitecture is the guest's architecture.
	// +optional
	PreferredArchitecture *string `json:"preferredArchitecture,omitempty"`
}

// VolumePreferences are preferences of the VirtualMachine's volumes.
type VolumePreferences struct {
	// PreferredStorageClassName is the storage class of DataVolume templates that name none.
	// +optional
	PreferredStorageClassName string `json:"preferredStorageClassName,omitempty"`
}

// PreferredCPUTopology says how an instance type's vCPUs are laid out.
type PreferredCPUTopology string

// CPU topologies.
const (
	// Sockets: one socket per vCPU (the default).
	Sockets PreferredCPUTopology = "sockets"
	// Cores: one socket with one core per vCPU.
	Cores PreferredCPUTopology = "cores"
	// Threads: one socket and core with one thread per vCPU.
	Threads PreferredCPUTopology = "threads"
	// Spread: the vCPUs spread over sockets and cores (and threads) by spreadOptions.
	Spread PreferredCPUTopology = "spread"
	// Any: the VirtualMachine's own topology, if it sets one; else as sockets.
	Any PreferredCPUTopology = "any"

	// The names of older releases, still accepted.
	DeprecatedPreferSockets PreferredCPUTopology = "preferSockets"
	DeprecatedPreferCores   PreferredCPUTopology = "preferCores"
	DeprecatedPreferThreads PreferredCPUTopology = "preferThreads"
	DeprecatedPreferSpread  PreferredCPUTopology = "preferSpread"
	DeprecatedPreferAny     PreferredCPUTopology = "preferAny"
)

// CPUPreferences are preferences of the guest's CPU.
type CPUPreferences struct {
	// PreferredCPUTopology lays the vCPUs out: sockets (default), cores, threads, spread or any.
	// +optional
	PreferredCPUTopology *PreferredCPUTopology `json:"preferredCPUTopology,omitempty"`
	// SpreadOptions tune the spread topology.
	// +optional
	SpreadOptions *SpreadOptions `json:"spreadOptions,omitempty"`
	// PreferredCPUFeatures are CPU features the guest's CPU gets unless it names them itself.
	// +optional
	// +listType=atomic
	PreferredCPUFeatures []kubevirtv1.CPUFeature `json:"preferredCPUFeatures,omitempty"`
}

// SpreadAcross names the levels the spread topology spreads vCPUs over.
type SpreadAcross string

// Spread levels.
const (
	SpreadAcrossSocketsCoresThreads SpreadAcross = "SocketsCoresThreads"
	SpreadAcrossSocketsCores        SpreadAcross = "SocketsCores"
	SpreadAcrossCoresThreads        SpreadAcross = "CoresThreads"
)

// SpreadOptions tune the spread topology.
type SpreadOptions struct {
	// Across is SocketsCores (default), SocketsCoresThreads or CoresThreads.
	// +optional
	Across *SpreadAcross `json:"across,omitempty"`
	// Ratio is the vCPUs of the lower level per unit of the higher one (default 2).
	// +optional
	Ratio *int32 `json:"ratio,omitempty"`
}

// DevicePreferences are preferences of the guest's devices. Each one applies where the
// VirtualMachine's own device leaves the field unset.
type DevicePreferences struct {
	// PreferredAutoattachGraphicsDevice: whether a graphics device is attached.
	// +optional
	PreferredAutoattachGraphicsDevice *bool `json:"preferredAutoattachGraphicsDevice,omitempty"`
	// PreferredAutoattachMemBalloon: whether a memory balloon is attached.
	// +optional
	PreferredAutoattachMemBalloon *bool `json:"preferredAutoattachMemBalloon,omitempty"`
	// PreferredAutoattachPodInterface: whether the pod network interface is attached.
	// +optional
	PreferredAutoattachPodInterface *bool `json:"preferredAutoattachPodInterface,omitempty"`
	// PreferredAutoattachSerialConsole: whether a serial console is attached.
	// +optional
	PreferredAutoattachSerialConsole *bool `json:"preferredAutoattachSerialConsole,omitempty"`
	// PreferredAutoattachInputDevice: whether an input device is attached.
	// +optional
	PreferredAutoattachInputDevice *bool `json:"preferredAutoattachInputDevice,omitempty"`
	// PreferredDisableHotplug disables hotplug.
	// +optional
	PreferredDisableHotplug *bool `json:"preferredDisableHotplug,omitempty"`
	// PreferredVirtualGPUOptions are the options of virtual GPUs.
	// +optional
	PreferredVirtualGPUOptions *kubevirtv1.VGPUOptions `json:"preferredVirtualGPUOptions,omitempty"`
	// PreferredSoundModel is the sound device's model.
	// +optional
	PreferredSoundModel string `json:"preferredSoundModel,omitempty"`
	// PreferredUseVirtioTransitional uses virtio transitional devices.
	// +optional
	PreferredUseVirtioTransitional *bool `json:"preferredUseVirtioTransitional,omitempty"`
	// PreferredInputBus is the bus of input devices.
	// +optional
	PreferredInputBus kubevirtv1.InputBus `json:"preferredInputBus,omitempty"`
	// PreferredInputType is the type of input devices.
	// +optional
	PreferredInputType kubevirtv1.InputType `json:"preferredInputType,omitempty"`
	// PreferredDiskBus is the bus of disks.
	// +optional
	PreferredDiskBus kubevirtv1.DiskBus `json:"preferredDiskBus,omitempty"`
	// PreferredLunBus is the bus of LUNs.
	// +optional
	PreferredLunBus kubevirtv1.DiskBus `json:"preferredLunBus,omitempty"`
	// PreferredCdromBus is the bus of CD-ROMs.
	// +optional
	PreferredCdromBus kubevirtv1.DiskBus `json:"preferredCdromBus,omitempty"`
	// PreferredDiskDedicatedIoThread gives disks a dedicated IO thread.
	// +optional
	PreferredDiskDedicatedIoThread *bool `json:"preferredDiskDedicatedIoThread,omitempty"`
	// PreferredDiskCache is the cache mode of disks.
	// +optional
	PreferredDiskCache kubevirtv1.DriverCache `json:"preferredDiskCache,omitempty"`
	// PreferredDiskIO is the IO mode of disks.
	// +optional
	PreferredDiskIO kubevirtv1.DriverIO `json:"preferredDiskIO,omitempty"`
	// PreferredDiskBlockSize is the block size of disks.
	// +optional
	PreferredDiskBlockSize *kubevirtv1.BlockSize `json:"preferredDiskBlockSize,omitempty"`
	// PreferredInterfaceModel is the model of network interfaces.
	// +optional
	PreferredInterfaceModel string `json:"preferredInterfaceModel,omitempty"`
	// PreferredRng attaches a random number generator.
	// +optional
	PreferredRng *kubevirtv1.Rng `json:"preferredRng,omitempty"`
	// PreferredBlockMultiQueue gives disks a queue per vCPU.
	// +optional
	PreferredBlockMultiQueue *bool `json:"preferredBlockMultiQueue,omitempty"`
	// PreferredNetworkInterfaceMultiQueue gives network interfaces a queue per vCPU.
	// +optional
	PreferredNetworkInterfaceMultiQueue *bool `json:"preferredNetworkInterfaceMultiQueue,omitempty"`
	// PreferredTPM attaches a TPM.
	// +optional
	PreferredTPM *kubevirtv1.TPMDevice `json:"preferredTPM,omitempty"`
	// PreferredInterfaceMasquerade is the binding of interfaces that name none.
	// +optional
	PreferredInterfaceMasquerade *kubevirtv1.InterfaceMasquerade `json:"preferredInterfaceMasquerade,omitempty"`
	// PreferredPanicDeviceModel is the model of panic devices.
	// +optional
	PreferredPanicDeviceModel *kubevirtv1.PanicDeviceModel `json:"preferredPanicDeviceModel,omitempty"`
}

// FeaturePreferences are preferences of the guest's features.
type FeaturePreferences struct {
	// PreferredAcpi is the ACPI feature.
	// +optional
	PreferredAcpi *kubevirtv1.FeatureState `json:"preferredAcpi,omitempty"`
	// PreferredApic is the APIC feature.
	// +optional
	PreferredApic *kubevirtv1.FeatureAPIC `json:"preferredApic,omitempty"`
	// PreferredHyperv are the Hyper-V enlightenments.
	// +optional
	PreferredHyperv *kubevirtv1.FeatureHyperv `json:"preferredHyperv,omitempty"`
	// PreferredKvm is the KVM feature.
	// +optional
	PreferredKvm *kubevirtv1.FeatureKVM `json:"preferredKvm,omitempty"`
	// PreferredPvspinlock is the paravirtual spinlock feature.
	// +optional
	PreferredPvspinlock *kubevirtv1.FeatureState `json:"preferredPvspinlock,omitempty"`
	// PreferredSmm is the system management mode feature.
	// +optional
	PreferredSmm *kubevirtv1.FeatureState `json:"preferredSmm,omitempty"`
}

// FirmwarePreferences are preferences of the guest's firmware.
type FirmwarePreferences struct {
	// PreferredUseBios boots with BIOS.
	// +optional
	PreferredUseBios *bool `json:"preferredUseBios,omitempty"`
	// PreferredUseBiosSerial sends BIOS output to the serial console.
	// +optional
	PreferredUseBiosSerial *bool `json:"preferredUseBiosSerial,omitempty"`
	// PreferredUseEfi boots with EFI (use preferredEfi).
	// +optional
	PreferredUseEfi *bool `json:"preferredUseEfi,omitempty"`
	// PreferredUseSecureBoot boots with EFI and secure boot (use preferredEfi).
	// +optional
	PreferredUseSecureBoot *bool `json:"preferredUseSecureBoot,omitempty"`
	// PreferredEfi boots with EFI with these settings.
	// +optional
	PreferredEfi *kubevirtv1.EFI `json:"preferredEfi,omitempty"`
}

// MachinePreferences are preferences of the guest's machine.
type MachinePreferences struct {
	// PreferredMachineType is the machine type (e.g. q35).
	// +optional
	PreferredMachineType string `json:"preferredMachineType,omitempty"`
}

// ClockPreferences are preferences of the guest's clock.
type ClockPreferences struct {
	// PreferredClockOffset is the clock's offset (utc or a timezone).
	// +optional
	PreferredClockOffset *kubevirtv1.ClockOffset `json:"preferredClockOffset,omitempty"`
	// PreferredTimer are the clock's timers.
	// +optional
	PreferredTimer *kubevirtv1.Timer `json:"preferredTimer,omitempty"`
}

// PreferenceRequirements are what a preference needs of the instance type (or of the
// VirtualMachine without one).
type PreferenceRequirements struct {
	// CPU is the least vCPU count.
	// +optional
	CPU *CPUPreferenceRequirement `json:"cpu,omitempty"`
	// Memory is the least guest memory.
	// +optional
	Memory *MemoryPreferenceRequirement `json:"memory,omitempty"`
	// Architecture is the architecture the VirtualMachine must have.
	// +optional
	Architecture *string `json:"architecture,omitempty"`
}

// CPUPreferenceRequirement is the least vCPU count.
type CPUPreferenceRequirement struct {
	// Guest is the least number of vCPUs.
	Guest int32 `json:"guest"`
}

// MemoryPreferenceRequirement is the least guest memory.
type MemoryPreferenceRequirement struct {
	// Guest is the least guest memory.
	Guest resource.Quantity `json:"guest"`
}
