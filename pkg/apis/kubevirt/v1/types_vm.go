package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// VirtualMachine is a persistent virtual machine. According to its run
// strategy it creates, keeps and removes one VirtualMachineInstance of the
// same name.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachine struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired virtual machine: its instance template and run strategy.
	Spec VirtualMachineSpec `json:"spec"`
	// Status is the observed state, written by NativeVirt.
	// +optional
	Status VirtualMachineStatus `json:"status,omitempty"`
}

// VirtualMachineList is a list of VirtualMachines.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the VirtualMachines of the list.
	Items []VirtualMachine `json:"items"`
}

// VirtualMachineRunStrategy says when a VirtualMachine's instance should run.
type VirtualMachineRunStrategy string

// Run strategies.
const (
	// RunStrategyUnknown: no strategy could be determined.
	RunStrategyUnknown VirtualMachineRunStrategy = ""
	// RunStrategyAlways keeps an instance running, restarting it whenever it stops.
	RunStrategyAlways VirtualMachineRunStrategy = "Always"
	// RunStrategyHalted keeps no instance running.
	RunStrategyHalted VirtualMachineRunStrategy = "Halted"
	// RunStrategyManual starts and stops only on explicit start/stop requests.
	RunStrategyManual VirtualMachineRunStrategy = "Manual"
	// RunStrategyRerunOnFailure restarts the instance after a failure, not after a clean shutdown.
	RunStrategyRerunOnFailure VirtualMachineRunStrategy = "RerunOnFailure"
	// RunStrategyOnce runs the instance once, never restarting it.
	RunStrategyOnce VirtualMachineRunStrategy = "Once"
	// RunStrategyWaitAsReceiver waits as the target of a cross-cluster migration.
	RunStrategyWaitAsReceiver VirtualMachineRunStrategy = "WaitAsReceiver"
)

// UpdateVolumesStrategy says how volume changes reach a running instance.
type UpdateVolumesStrategy string

// Volume update strategies.
const (
	// UpdateVolumesStrategyMigration migrates the storage of the running guest.
	UpdateVolumesStrategyMigration UpdateVolumesStrategy = "Migration"
	// UpdateVolumesStrategyReplacement applies the change on the next restart.
	UpdateVolumesStrategyReplacement UpdateVolumesStrategy = "Replacement"
)

// VirtualMachineSpec is the desired state of a VirtualMachine.
type VirtualMachineSpec struct {
	// Running true keeps an instance running, false keeps none. Deprecated in
	// favour of runStrategy; the two are mutually exclusive.
	// +optional
	Running *bool `json:"running,omitempty"`
	// RunStrategy says when an instance should run: Always, RerunOnFailure,
	// Manual, Halted, Once or WaitAsReceiver. Mutually exclusive with running.
	// +optional
	RunStrategy *VirtualMachineRunStrategy `json:"runStrategy,omitempty"`
	// Instancetype references an instance type that supplies resources and CPU.
	// +optional
	Instancetype *InstancetypeMatcher `json:"instancetype,omitempty"`
	// Preference references a preference that supplies defaults.
	// +optional
	Preference *PreferenceMatcher `json:"preference,omitempty"`
	// Template is the instance to create.
	Template *VirtualMachineInstanceTemplateSpec `json:"template"`
	// DataVolumeTemplates are CDI DataVolumes created with the VirtualMachine.
	// +optional
	// +listType=atomic
	DataVolumeTemplates []DataVolumeTemplateSpec `json:"dataVolumeTemplates,omitempty"`
	// UpdateVolumesStrategy says how volume changes reach a running instance:
	// Replacement (on restart) or Migration.
	// +optional
	UpdateVolumesStrategy *UpdateVolumesStrategy `json:"updateVolumesStrategy,omitempty"`
}

// InferFromVolumeFailurePolicy says what happens when inferring an
// instancetype or preference from a volume fails.
type InferFromVolumeFailurePolicy string

// Infer-from-volume failure policies.
const (
	// RejectInferFromVolumeFailure rejects the VirtualMachine.
	RejectInferFromVolumeFailure InferFromVolumeFailurePolicy = "Reject"
	// IgnoreInferFromVolumeFailure goes on without.
	IgnoreInferFromVolumeFailure InferFromVolumeFailurePolicy = "Ignore"
)

// InstancetypeMatcher references an instance type.
type InstancetypeMatcher struct {
	// Name of the instance type.
	// +optional
	Name string `json:"name,omitempty"`
	// Kind is VirtualMachineInstancetype or VirtualMachineClusterInstancetype (the default).
	// +optional
	Kind string `json:"kind,omitempty"`
	// RevisionName pins a ControllerRevision of the instance type.
	// +optional
	RevisionName string `json:"revisionName,omitempty"`
	// InferFromVolume names a volume whose labels name the instance type.
	// +optional
	InferFromVolume string `json:"inferFromVolume,omitempty"`
	// InferFromVolumeFailurePolicy is Reject (default) or Ignore.
	// +optional
	InferFromVolumeFailurePolicy *InferFromVolumeFailurePolicy `json:"inferFromVolumeFailurePolicy,omitempty"`
}

// PreferenceMatcher references a preference.
type PreferenceMatcher struct {
	// Name of the preference.
	// +optional
	Name string `json:"name,omitempty"`
	// Kind is VirtualMachinePreference or VirtualMachineClusterPreference (the default).
	// +optional
	Kind string `json:"kind,omitempty"`
	// RevisionName pins a ControllerRevision of the preference.
	// +optional
	RevisionName string `json:"revisionName,omitempty"`
	// InferFromVolume names a volume whose labels name the preference.
	// +optional
	InferFromVolume string `json:"inferFromVolume,omitempty"`
	// InferFromVolumeFailurePolicy is Reject (default) or Ignore.
	// +optional
	InferFromVolumeFailurePolicy *InferFromVolumeFailurePolicy `json:"inferFromVolumeFailurePolicy,omitempty"`
}

// VirtualMachinePrintableStatus is a one-word summary of a VirtualMachine's state.
type VirtualMachinePrintableStatus string

// Printable statuses.
const (
	// VirtualMachineStatusStopped: no instance runs.
	VirtualMachineStatusStopped VirtualMachinePrintableStatus = "Stopped"
	// VirtualMachineStatusProvisioning: volumes are being prepared.
	VirtualMachineStatusProvisioning VirtualMachinePrintableStatus = "Provisioning"
	// VirtualMachineStatusStarting: the instance is being scheduled or booted.
	VirtualMachineStatusStarting VirtualMachinePrintableStatus = "Starting"
	// VirtualMachineStatusRunning: the instance runs.
	VirtualMachineStatusRunning VirtualMachinePrintableStatus = "Running"
	// VirtualMachineStatusPaused: the instance is paused.
	VirtualMachineStatusPaused VirtualMachinePrintableStatus = "Paused"
	// VirtualMachineStatusStopping: the instance is shutting down.
	VirtualMachineStatusStopping VirtualMachinePrintableStatus = "Stopping"
	// VirtualMachineStatusTerminating: the VirtualMachine is being deleted.
	VirtualMachineStatusTerminating VirtualMachinePrintableStatus = "Terminating"
	// VirtualMachineStatusCrashLoopBackOff: the instance keeps failing; restarts are backed off.
	VirtualMachineStatusCrashLoopBackOff VirtualMachinePrintableStatus = "CrashLoopBackOff"
	// VirtualMachineStatusMigrating: the instance is being migrated.
	VirtualMachineStatusMigrating VirtualMachinePrintableStatus = "Migrating"
	// VirtualMachineStatusUnknown: the state cannot be determined.
	VirtualMachineStatusUnknown VirtualMachinePrintableStatus = "Unknown"
	// VirtualMachineStatusUnschedulable: the launcher pod cannot be scheduled.
	VirtualMachineStatusUnschedulable VirtualMachinePrintableStatus = "ErrorUnschedulable"
	// VirtualMachineStatusErrImagePull: an image cannot be pulled.
	VirtualMachineStatusErrImagePull VirtualMachinePrintableStatus = "ErrImagePull"
	// VirtualMachineStatusImagePullBackOff: image pulls keep failing and are backed off.
	VirtualMachineStatusImagePullBackOff VirtualMachinePrintableStatus = "ImagePullBackOff"
	// VirtualMachineStatusPvcNotFound: a claim does not exist.
	VirtualMachineStatusPvcNotFound VirtualMachinePrintableStatus = "ErrorPvcNotFound"
	// VirtualMachineStatusDataVolumeError: a DataVolume failed.
	VirtualMachineStatusDataVolumeError VirtualMachinePrintableStatus = "DataVolumeError"
	// VirtualMachineStatusWaitingForVolumeBinding: a claim waits to be bound.
	VirtualMachineStatusWaitingForVolumeBinding VirtualMachinePrintableStatus = "WaitingForVolumeBinding"
	// VirtualMachineStatusWaitingForReceiver: waiting as a migration target.
	VirtualMachineStatusWaitingForReceiver VirtualMachinePrintableStatus = "WaitingForReceiver"
)

// VirtualMachineStatus is the observed state of a VirtualMachine.
type VirtualMachineStatus struct {
	// SnapshotInProgress names the snapshot being taken, if any.
	// +optional
	SnapshotInProgress *string `json:"snapshotInProgress,omitempty"`
	// RestoreInProgress names the restore running, if any.
	// +optional
	RestoreInProgress *string `json:"restoreInProgress,omitempty"`
	// Created says whether the instance exists.
	// +optional
	Created bool `json:"created,omitempty"`
	// Ready says whether the instance exists and is ready.
	// +optional
	Ready bool `json:"ready,omitempty"`
	// PrintableStatus summarises the state in one word (Stopped, Starting, Running, ...).
	// +optional
	PrintableStatus VirtualMachinePrintableStatus `json:"printableStatus,omitempty"`
	// Conditions are the latest observations of the VirtualMachine's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineCondition `json:"conditions,omitempty"`
	// StateChangeRequests are pending start/stop requests, processed in order.
	// +optional
	// +listType=atomic
	StateChangeRequests []VirtualMachineStateChangeRequest `json:"stateChangeRequests,omitempty"`
	// VolumeSnapshotStatuses say, per volume, whether it can be snapshotted.
	// +optional
	// +listType=atomic
	VolumeSnapshotStatuses []VolumeSnapshotStatus `json:"volumeSnapshotStatuses,omitempty"`
	// StartFailure tracks consecutive start failures, for back-off.
	// +optional
	StartFailure *VirtualMachineStartFailure `json:"startFailure,omitempty"`
	// ObservedGeneration is the generation the instance was last synced from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// DesiredGeneration is the VirtualMachine's generation at the last sync.
	// +optional
	DesiredGeneration int64 `json:"desiredGeneration,omitempty"`
	// RunStrategy is the run strategy in effect.
	// +optional
	RunStrategy VirtualMachineRunStrategy `json:"runStrategy,omitempty"`
	// InstancetypeRef is the instance type in effect.
	// +optional
	InstancetypeRef *InstancetypeStatusRef `json:"instancetypeRef,omitempty"`
	// PreferenceRef is the preference in effect.
	// +optional
	PreferenceRef *InstancetypeStatusRef `json:"preferenceRef,omitempty"`
}

// VirtualMachineConditionType names a condition of a VirtualMachine.
type VirtualMachineConditionType string

// VirtualMachine condition types.
const (
	// VirtualMachineFailure: creating or deleting the instance failed.
	VirtualMachineFailure VirtualMachineConditionType = "Failure"
	// VirtualMachineReady: the instance is ready.
	VirtualMachineReady VirtualMachineConditionType = "Ready"
	// VirtualMachinePaused: the instance is paused.
	VirtualMachinePaused VirtualMachineConditionType = "Paused"
	// VirtualMachineRestartRequired: a spec change takes effect only after a restart.
	VirtualMachineRestartRequired VirtualMachineConditionType = "RestartRequired"
	// VirtualMachineManualRecoveryRequired: the instance needs manual recovery.
	VirtualMachineManualRecoveryRequired VirtualMachineConditionType = "ManualRecoveryRequired"
)

// VirtualMachineCondition is one observation of a VirtualMachine's state.
type VirtualMachineCondition struct {
	// Type of the condition.
	Type VirtualMachineConditionType `json:"type"`
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

// StateChangeRequestAction is a requested state change.
type StateChangeRequestAction string

// State change actions.
const (
	// StartRequest asks for the instance to be started.
	StartRequest StateChangeRequestAction = "Start"
	// StopRequest asks for the instance to be stopped.
	StopRequest StateChangeRequestAction = "Stop"
)

// Keys of VirtualMachineStateChangeRequest.Data.
const (
	// StartRequestDataPausedKey marks a start request that starts paused.
	StartRequestDataPausedKey string = "paused"
	// StartRequestDataPausedTrue is its value.
	StartRequestDataPausedTrue string = "true"
)

// VirtualMachineStateChangeRequest is a pending start or stop request.
type VirtualMachineStateChangeRequest struct {
	// Action is Start or Stop.
	Action StateChangeRequestAction `json:"action"`
	// Data carries options of the request (e.g. paused: "true").
	// +optional
	Data map[string]string `json:"data,omitempty"`
	// UID of the instance the request applies to; a Stop only stops that instance.
	// +optional
	UID *types.UID `json:"uid,omitempty"`
}

// VirtualMachineStartFailure tracks consecutive start failures.
type VirtualMachineStartFailure struct {
	// ConsecutiveFailCount counts failed starts in a row.
	// +optional
	ConsecutiveFailCount int32 `json:"consecutiveFailCount,omitempty"`
	// LastFailedVMIUID is the UID of the last instance that failed.
	// +optional
	LastFailedVMIUID types.UID `json:"lastFailedVMIUID,omitempty"`
	// RetryAfterTimestamp is when the next start may happen.
	// +optional
	RetryAfterTimestamp *metav1.Time `json:"retryAfterTimestamp,omitempty"`
}

// VolumeSnapshotStatus says whether a volume can be snapshotted.
type VolumeSnapshotStatus struct {
	// Name of the volume.
	Name string `json:"name"`
	// Enabled is true when the volume can be snapshotted.
	Enabled bool `json:"enabled"`
	// Reason it cannot be.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// InstancetypeStatusRef is the instance type or preference in effect.
type InstancetypeStatusRef struct {
	// Name of the object.
	// +optional
	Name string `json:"name,omitempty"`
	// Kind of the object.
	// +optional
	Kind string `json:"kind,omitempty"`
	// ControllerRevisionRef is the revision in use.
	// +optional
	ControllerRevisionRef *ControllerRevisionRef `json:"controllerRevisionRef,omitempty"`
	// InferFromVolume is the volume it was inferred from.
	// +optional
	InferFromVolume string `json:"inferFromVolume,omitempty"`
	// InferFromVolumeFailurePolicy is Reject or Ignore.
	// +optional
	InferFromVolumeFailurePolicy *InferFromVolumeFailurePolicy `json:"inferFromVolumeFailurePolicy,omitempty"`
}

// ControllerRevisionRef names a ControllerRevision.
type ControllerRevisionRef struct {
	// Name of the ControllerRevision.
	// +optional
	Name string `json:"name,omitempty"`
}
