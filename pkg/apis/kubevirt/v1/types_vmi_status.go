package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// VirtualMachineInstancePhase is the lifecycle phase of an instance.
type VirtualMachineInstancePhase string

// Instance phases.
const (
	// VmPhaseUnset is the phase of an instance nobody has looked at yet.
	VmPhaseUnset VirtualMachineInstancePhase = ""
	// Pending: accepted, no launcher pod yet.
	Pending VirtualMachineInstancePhase = "Pending"
	// Scheduling: the launcher pod exists but has no node yet.
	Scheduling VirtualMachineInstancePhase = "Scheduling"
	// Scheduled: the launcher pod is bound to a node; the guest is not running yet.
	Scheduled VirtualMachineInstancePhase = "Scheduled"
	// Running: the guest runs.
	Running VirtualMachineInstancePhase = "Running"
	// Succeeded: the guest shut down by itself or on request. Final.
	Succeeded VirtualMachineInstancePhase = "Succeeded"
	// Failed: the guest crashed or could not start. Final.
	Failed VirtualMachineInstancePhase = "Failed"
	// WaitingForSync: a migration target waiting for its source.
	WaitingForSync VirtualMachineInstancePhase = "WaitingForSync"
	// Unknown: the state cannot be determined, typically because the node is unreachable.
	Unknown VirtualMachineInstancePhase = "Unknown"
)

// VirtualMachineInstanceConditionType names a condition of an instance.
type VirtualMachineInstanceConditionType string

// Instance condition types.
const (
	// VirtualMachineInstanceProvisioning: volumes are still being prepared.
	VirtualMachineInstanceProvisioning VirtualMachineInstanceConditionType = "Provisioning"
	// VirtualMachineInstanceReady: the guest runs and its readiness probe (if any) passes.
	VirtualMachineInstanceReady VirtualMachineInstanceConditionType = "Ready"
	// VirtualMachineInstanceSynchronized: false when the node agent failed to apply the spec.
	VirtualMachineInstanceSynchronized VirtualMachineInstanceConditionType = "Synchronized"
	// VirtualMachineInstancePaused: the guest's vCPUs are paused.
	VirtualMachineInstancePaused VirtualMachineInstanceConditionType = "Paused"
	// VirtualMachineInstanceAgentConnected: a guest agent is connected.
	VirtualMachineInstanceAgentConnected VirtualMachineInstanceConditionType = "AgentConnected"
	// VirtualMachineInstanceAccessCredentialsSynchronized: access credentials were injected.
	VirtualMachineInstanceAccessCredentialsSynchronized VirtualMachineInstanceConditionType = "AccessCredentialsSynchronized"
	// VirtualMachineInstanceUnsupportedAgent: the guest agent version is not supported.
	VirtualMachineInstanceUnsupportedAgent VirtualMachineInstanceConditionType = "AgentVersionNotSupported"
	// VirtualMachineInstanceIsMigratable: the guest can be live-migrated.
	VirtualMachineInstanceIsMigratable VirtualMachineInstanceConditionType = "LiveMigratable"
	// VirtualMachineInstanceIsStorageLiveMigratable: the guest's storage can be live-migrated.
	VirtualMachineInstanceIsStorageLiveMigratable VirtualMachineInstanceConditionType = "StorageLiveMigratable"
	// VirtualMachineInstanceDataVolumesReady: all data volumes are ready.
	VirtualMachineInstanceDataVolumesReady VirtualMachineInstanceConditionType = "DataVolumesReady"
	// VirtualMachineInstanceMigrationRequired: a change needs a migration to take effect.
	VirtualMachineInstanceMigrationRequired VirtualMachineInstanceConditionType = "MigrationRequired"
	// VirtualMachineInstanceEvictionRequested: the launcher pod was asked to be evicted.
	VirtualMachineInstanceEvictionRequested VirtualMachineInstanceConditionType = "EvictionRequested"
)

// Reasons used with instance conditions.
const (
	// PodTerminatingReason: the launcher pod is being deleted.
	PodTerminatingReason = "PodTerminating"
	// PodNotExistsReason: the launcher pod is gone.
	PodNotExistsReason = "PodNotExists"
	// PodConditionMissingReason: the launcher pod reports no Ready condition.
	PodConditionMissingReason = "PodConditionMissing"
	// GuestNotRunningReason: the guest is not running.
	GuestNotRunningReason = "GuestNotRunning"
)

// VirtualMachineInstanceMigrationMethod says how a migration moves the guest.
type VirtualMachineInstanceMigrationMethod string

// Migration methods.
const (
	// BlockMigration copies the disks along with memory.
	BlockMigration VirtualMachineInstanceMigrationMethod = "BlockMigration"
	// LiveMigration copies memory only; disks are shared.
	LiveMigration VirtualMachineInstanceMigrationMethod = "LiveMigration"
)

// VirtualMachineInstanceMigrationTransport says how migration traffic travels.
type VirtualMachineInstanceMigrationTransport string

// Migration transports.
const (
	// MigrationTransportUnix tunnels migration traffic through unix sockets.
	MigrationTransportUnix VirtualMachineInstanceMigrationTransport = "Unix"
)

// VirtualMachineInstanceStatus is the observed state of an instance.
type VirtualMachineInstanceStatus struct {
	// NodeName is the node the guest runs on.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// Reason is a short machine-readable reason for the current phase.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Conditions are the latest observations of the instance's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineInstanceCondition `json:"conditions,omitempty"`
	// Phase is the lifecycle phase: Pending, Scheduling, Scheduled, Running,
	// Succeeded, Failed or Unknown.
	// +optional
	Phase VirtualMachineInstancePhase `json:"phase,omitempty"`
	// PhaseTransitionTimestamps records when each phase was entered.
	// +optional
	// +listType=atomic
	PhaseTransitionTimestamps []VirtualMachineInstancePhaseTransitionTimestamp `json:"phaseTransitionTimestamps,omitempty"`
	// Interfaces are the guest's network interfaces as observed.
	// +optional
	// +listType=atomic
	Interfaces []VirtualMachineInstanceNetworkInterface `json:"interfaces,omitempty"`
	// GuestOSInfo describes the guest's operating system, as told by its guest agent.
	// +optional
	GuestOSInfo VirtualMachineInstanceGuestOSInfo `json:"guestOSInfo,omitempty"`
	// MigrationState is the state of the latest migration of the guest.
	// +optional
	MigrationState *VirtualMachineInstanceMigrationState `json:"migrationState,omitempty"`
	// MigrationMethod says whether a migration copies disks (BlockMigration) or not (LiveMigration).
	// +optional
	MigrationMethod VirtualMachineInstanceMigrationMethod `json:"migrationMethod,omitempty"`
	// MigrationTransport is how migration traffic travels.
	// +optional
	MigrationTransport VirtualMachineInstanceMigrationTransport `json:"migrationTransport,omitempty"`
	// QOSClass is the quality-of-service class of the launcher pod.
	// +optional
	QOSClass *corev1.PodQOSClass `json:"qosClass,omitempty"`
	// LauncherContainerImageVersion is the image of the launcher pod's compute container.
	// +optional
	LauncherContainerImageVersion string `json:"launcherContainerImageVersion,omitempty"`
	// EvacuationNodeName is set when the guest must leave that node (drain).
	// +optional
	EvacuationNodeName string `json:"evacuationNodeName,omitempty"`
	// ActivePods maps the UIDs of the launcher pods of the guest to their nodes.
	// +optional
	ActivePods map[types.UID]string `json:"activePods,omitempty"`
	// VolumeStatus reports the state of each volume.
	// +optional
	// +listType=atomic
	VolumeStatus []VolumeStatus `json:"volumeStatus,omitempty"`
	// KernelBootStatus describes the kernel and initrd of a kernel boot.
	// +optional
	KernelBootStatus *KernelBootStatus `json:"kernelBootStatus,omitempty"`
	// FSFreezeStatus says whether the guest's filesystems are frozen ("frozen") or not (empty).
	// +optional
	FSFreezeStatus string `json:"fsFreezeStatus,omitempty"`
	// TopologyHints carry node properties a migration target must match.
	// +optional
	TopologyHints *TopologyHints `json:"topologyHints,omitempty"`
	// VirtualMachineRevisionName names the revision of the owning VirtualMachine the instance was created from.
	// +optional
	VirtualMachineRevisionName string `json:"virtualMachineRevisionName,omitempty"`
	// RuntimeUser is the user ID the guest's processes run as.
	RuntimeUser int64 `json:"runtimeUser"`
	// VSOCKCID is the guest's vsock context ID, when VSOCK is attached.
	// +optional
	VSOCKCID *int64 `json:"VSOCKCID,omitempty"`
	// SelinuxContext is the SELinux context of the launcher pod's compute container.
	// +optional
	SelinuxContext string `json:"selinuxContext,omitempty"`
	// Machine is the machine type the guest actually runs with.
	// +optional
	Machine *Machine `json:"machine,omitempty"`
	// CurrentCPUTopology is the guest's CPU topology as it runs now.
	// +optional
	CurrentCPUTopology *CPUTopology `json:"currentCPUTopology,omitempty"`
	// Memory reports the guest's memory as it runs now.
	// +optional
	Memory *MemoryStatus `json:"memory,omitempty"`
}

// VirtualMachineInstanceCondition is one observation of an instance's state.
type VirtualMachineInstanceCondition struct {
	// Type of the condition.
	Type VirtualMachineInstanceConditionType `json:"type"`
	// Status is True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// LastProbeTime is when the condition was last checked.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a short machine-readable reason for the status.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains the status for humans.
	// +optional
	Message string `json:"message,omitempty"`
}

// VirtualMachineInstancePhaseTransitionTimestamp records when a phase was entered.
type VirtualMachineInstancePhaseTransitionTimestamp struct {
	// Phase entered.
	// +optional
	Phase VirtualMachineInstancePhase `json:"phase,omitempty"`
	// PhaseTransitionTimestamp is when it was entered.
	// +optional
	PhaseTransitionTimestamp metav1.Time `json:"phaseTransitionTimestamp,omitempty"`
}

// VirtualMachineInstanceNetworkInterface is one guest network interface as observed.
type VirtualMachineInstanceNetworkInterface struct {
	// IP is the interface's primary IP address.
	// +optional
	IP string `json:"ipAddress,omitempty"`
	// MAC is the interface's hardware address.
	// +optional
	MAC string `json:"mac,omitempty"`
	// Name is the name of the interface in the spec (and of its network).
	// +optional
	Name string `json:"name,omitempty"`
	// IPs are all IP addresses of the interface.
	// +optional
	// +listType=atomic
	IPs []string `json:"ipAddresses,omitempty"`
	// PodInterfaceName is the name of the launcher pod's interface backing this one.
	// +optional
	PodInterfaceName string `json:"podInterfaceName,omitempty"`
	// InterfaceName is the interface's name inside the guest.
	// +optional
	InterfaceName string `json:"interfaceName,omitempty"`
	// InfoSource lists where the information came from: domain, guest-agent, multus-status.
	// +optional
	InfoSource string `json:"infoSource,omitempty"`
	// QueueCount is the number of queues of the interface.
	// +optional
	QueueCount int32 `json:"queueCount,omitempty"`
	// LinkState is the interface's link state (up or down).
	// +optional
	LinkState string `json:"linkState,omitempty"`
}

// VirtualMachineInstanceGuestOSInfo describes the guest's operating system.
type VirtualMachineInstanceGuestOSInfo struct {
	// Name of the operating system.
	// +optional
	Name string `json:"name,omitempty"`
	// KernelRelease of the guest kernel.
	// +optional
	KernelRelease string `json:"kernelRelease,omitempty"`
	// Version of the operating system.
	// +optional
	Version string `json:"version,omitempty"`
	// PrettyName is the human-friendly name of the operating system.
	// +optional
	PrettyName string `json:"prettyName,omitempty"`
	// VersionID of the operating system.
	// +optional
	VersionID string `json:"versionId,omitempty"`
	// KernelVersion of the guest kernel.
	// +optional
	KernelVersion string `json:"kernelVersion,omitempty"`
	// Machine is the guest's hardware platform (e.g. x86_64).
	// +optional
	Machine string `json:"machine,omitempty"`
	// ID of the operating system (e.g. fedora).
	// +optional
	ID string `json:"id,omitempty"`
}

// VolumePhase is the state of a volume of an instance.
type VolumePhase string

// Volume phases.
const (
	// VolumePending: the volume is not ready yet.
	VolumePending VolumePhase = "Pending"
	// VolumeBound: the volume's claim is bound.
	VolumeBound VolumePhase = "Bound"
	// HotplugVolumeAttachedToNode: a hotplugged volume is attached to the node.
	HotplugVolumeAttachedToNode VolumePhase = "AttachedToNode"
	// HotplugVolumeMounted: a hotplugged volume is mounted into the launcher pod.
	HotplugVolumeMounted VolumePhase = "MountedToPod"
	// VolumeReady: the volume is in use by the guest.
	VolumeReady VolumePhase = "Ready"
	// HotplugVolumeDetaching: a hotplugged volume is being removed.
	HotplugVolumeDetaching VolumePhase = "Detaching"
	// HotplugVolumeUnMounted: a hotplugged volume was unmounted from the launcher pod.
	HotplugVolumeUnMounted VolumePhase = "UnMountedFromPod"
	// MemoryDumpVolumeCompleted: a memory dump finished.
	MemoryDumpVolumeCompleted VolumePhase = "MemoryDumpCompleted"
	// MemoryDumpVolumeInProgress: a memory dump is running.
	MemoryDumpVolumeInProgress VolumePhase = "MemoryDumpInProgress"
	// MemoryDumpVolumeFailed: a memory dump failed.
	MemoryDumpVolumeFailed VolumePhase = "MemoryDumpFailed"
)

// VolumeStatus is the observed state of one volume.
type VolumeStatus struct {
	// Name of the volume.
	Name string `json:"name"`
	// Target is the device name of the volume inside the guest (e.g. vda).
	Target string `json:"target"`
	// Phase of the volume.
	// +optional
	Phase VolumePhase `json:"phase,omitempty"`
	// Reason is a short machine-readable reason for the phase.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains the phase for humans.
	// +optional
	Message string `json:"message,omitempty"`
	// PersistentVolumeClaimInfo describes the claim behind the volume, if any.
	// +optional
	PersistentVolumeClaimInfo *PersistentVolumeClaimInfo `json:"persistentVolumeClaimInfo,omitempty"`
	// HotplugVolume describes the attachment of a hotplugged volume.
	// +optional
	HotplugVolume *HotplugVolumeStatus `json:"hotplugVolume,omitempty"`
	// Size of the volume in bytes.
	// +optional
	Size int64 `json:"size,omitempty"`
	// MemoryDumpVolume describes a memory dump written to the volume.
	// +optional
	MemoryDumpVolume *DomainMemoryDumpInfo `json:"memoryDumpVolume,omitempty"`
	// ContainerDiskVolume describes the image of a container disk.
	// +optional
	ContainerDiskVolume *ContainerDiskInfo `json:"containerDiskVolume,omitempty"`
}

// Percent is a decimal fraction written as a string, e.g. "0.055".
type Percent string

// PersistentVolumeClaimInfo describes the claim behind a volume.
type PersistentVolumeClaimInfo struct {
	// ClaimName is the name of the claim.
	// +optional
	ClaimName string `json:"claimName,omitempty"`
	// AccessModes of the claim.
	// +optional
	// +listType=atomic
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
	// VolumeMode of the claim (Filesystem or Block).
	// +optional
	VolumeMode *corev1.PersistentVolumeMode `json:"volumeMode,omitempty"`
	// Capacity of the bound volume.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// Requests of the claim.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
	// Preallocated is true when the volume's space is fully allocated.
	// +optional
	Preallocated bool `json:"preallocated,omitempty"`
	// FilesystemOverhead is the share of a filesystem volume kept free for the filesystem itself.
	// +optional
	FilesystemOverhead *Percent `json:"filesystemOverhead,omitempty"`
}

// HotplugVolumeStatus describes how a hotplugged volume is attached.
type HotplugVolumeStatus struct {
	// AttachPodName is the pod that attaches the volume to the node.
	// +optional
	AttachPodName string `json:"attachPodName,omitempty"`
	// AttachPodUID is that pod's UID.
	// +optional
	AttachPodUID types.UID `json:"attachPodUID,omitempty"`
}

// DomainMemoryDumpInfo describes a memory dump of the guest.
type DomainMemoryDumpInfo struct {
	// StartTimestamp is when the dump started.
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty"`
	// EndTimestamp is when the dump ended.
	// +optional
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty"`
	// ClaimName is the claim the dump is written to.
	// +optional
	ClaimName string `json:"claimName,omitempty"`
	// TargetFileName is the dump file's name on that claim.
	// +optional
	TargetFileName string `json:"targetFileName,omitempty"`
}

// ContainerDiskInfo describes a container disk image.
type ContainerDiskInfo struct {
	// Checksum of the disk image (a CRC32).
	// +optional
	Checksum int64 `json:"checksum,omitempty"`
}

// KernelInfo describes the kernel of a kernel boot.
type KernelInfo struct {
	// Checksum of the kernel image (a CRC32).
	// +optional
	Checksum int64 `json:"checksum,omitempty"`
}

// InitrdInfo describes the initrd of a kernel boot.
type InitrdInfo struct {
	// Checksum of the initrd image (a CRC32).
	// +optional
	Checksum int64 `json:"checksum,omitempty"`
}

// KernelBootStatus describes the artifacts of a kernel boot.
type KernelBootStatus struct {
	// KernelInfo describes the kernel.
	// +optional
	KernelInfo *KernelInfo `json:"kernelInfo,omitempty"`
	// InitrdInfo describes the initrd.
	// +optional
	InitrdInfo *InitrdInfo `json:"initrdInfo,omitempty"`
}

// TopologyHints are node properties a migration target must match.
type TopologyHints struct {
	// TSCFrequency is the time stamp counter frequency of the source node, in Hz.
	// +optional
	TSCFrequency *int64 `json:"tscFrequency,omitempty"`
}

// CPUTopology is a guest CPU topology.
type CPUTopology struct {
	// Cores per socket.
	// +optional
	Cores int32 `json:"cores,omitempty"`
	// Sockets of the guest.
	// +optional
	Sockets int32 `json:"sockets,omitempty"`
	// Threads per core.
	// +optional
	Threads int32 `json:"threads,omitempty"`
}

// MemoryStatus reports a guest's memory.
type MemoryStatus struct {
	// GuestAtBoot is the memory the guest booted with.
	// +optional
	GuestAtBoot *resource.Quantity `json:"guestAtBoot,omitempty"`
	// GuestCurrent is the memory the guest sees now.
	// +optional
	GuestCurrent *resource.Quantity `json:"guestCurrent,omitempty"`
	// GuestRequested is the memory most recently requested for the guest.
	// +optional
	GuestRequested *resource.Quantity `json:"guestRequested,omitempty"`
}
