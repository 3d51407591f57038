package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// StartOptions is the body of a VirtualMachine start request.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type StartOptions struct {
	metav1.TypeMeta `json:",inline"`
	// Paused starts the guest with paused vCPUs.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// DryRun set to ["All"] validates the request without acting on it.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty"`
}

// StopOptions is the body of a VirtualMachine stop request.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type StopOptions struct {
	metav1.TypeMeta `json:",inline"`
	// GracePeriod overrides the instance's termination grace period for this stop, in seconds.
	// +optional
	GracePeriod *int64 `json:"gracePeriod,omitempty"`
	// DryRun set to ["All"] validates the request without acting on it.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty"`
}

// RestartOptions is the body of a VirtualMachine restart request.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type RestartOptions struct {
	metav1.TypeMeta `json:",inline"`
	// GracePeriodSeconds overrides the shutdown grace period; only unset and 0
	// (restart at once) are allowed.
	// +optional
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
	// DryRun set to ["All"] validates the request without acting on it.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty"`
}

// MigrateOptions is the body of a VirtualMachine migrate request.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type MigrateOptions struct {
	metav1.TypeMeta `json:",inline"`
	// DryRun set to ["All"] validates the request without acting on it.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty"`
	// AddedNodeSelector further restricts the target nodes; it cannot loosen
	// the instance's own node selector or affinity.
	// +optional
	AddedNodeSelector map[string]string `json:"addedNodeSelector,omitempty"`
}

// PauseOptions is the body of a VirtualMachineInstance pause request.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PauseOptions struct {
	metav1.TypeMeta `json:",inline"`
	// DryRun set to ["All"] validates the request without acting on it.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty"`
}

// UnpauseOptions is the body of a VirtualMachineInstance unpause request.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type UnpauseOptions struct {
	metav1.TypeMeta `json:",inline"`
	// DryRun set to ["All"] validates the request without acting on it.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty"`
}

// AddVolumeOptions is the body of an addvolume request on a VirtualMachine or a
// VirtualMachineInstance: a claim hotplugged into the running guest as a disk.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type AddVolumeOptions struct {
	metav1.TypeMeta `json:",inline"`
	// Name of the new volume and of its disk; it overrides the disk's own name.
	Name string `json:"name"`
	// Disk is the device the guest sees (bus scsi or virtio).
	Disk *Disk `json:"disk"`
	// VolumeSource is the claim or DataVolume to plug in.
	VolumeSource *HotplugVolumeSource `json:"volumeSource"`
	// DryRun set to ["All"] validates the request without acting on it.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty"`
}

// HotplugVolumeSource is the source of a hotplugged volume: a claim or a DataVolume.
type HotplugVolumeSource struct {
	// PersistentVolumeClaim names a claim in the guest's namespace.
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
	// DataVolume names a DataVolume in the guest's namespace.
	// +optional
	DataVolume *DataVolumeSource `json:"dataVolume,omitempty"`
}

// RemoveVolumeOptions is the body of a removevolume request: the hotplugged volume (and its
// disk) to unplug.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type RemoveVolumeOptions struct {
	metav1.TypeMeta `json:",inline"`
	// Name of the volume (or of its claim or DataVolume) to remove.
	Name string `json:"name"`
	// DryRun set to ["All"] validates the request without acting on it.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty"`
}
