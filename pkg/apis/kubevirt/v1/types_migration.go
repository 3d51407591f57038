package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// VirtualMachineInstanceMigration asks for one live migration of a
// VirtualMachineInstance to another node and reports its progress.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceMigration struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec names the instance to migrate.
	Spec VirtualMachineInstanceMigrationSpec `json:"spec"`
	// Status is the progress of the migration, written by NativeVirt.
	// +optional
	Status VirtualMachineInstanceMigrationStatus `json:"status,omitempty"`
}

// VirtualMachineInstanceMigrationList is a list of migrations.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceMigrationList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the migrations of the list.
	Items []VirtualMachineInstanceMigration `json:"items"`
}

// MigrationPriority orders migrations waiting to run.
type MigrationPriority string

// Migration priorities.
const (
	// PrioritySystemCritical is for migrations the system needs (e.g. to keep a node healthy).
	PrioritySystemCritical MigrationPriority = "system-critical"
	// PriorityUserTriggered is for migrations a user asked for.
	PriorityUserTriggered MigrationPriority = "user-triggered"
	// PrioritySystemMaintenance is for maintenance migrations (e.g. workload updates).
	PrioritySystemMaintenance MigrationPriority = "system-maintenance"
)

// VirtualMachineInstanceMigrationSpec says which instance to migrate.
type VirtualMachineInstanceMigrationSpec struct {
	// VMIName names the VirtualMachineInstance to migrate, in the same namespace.
	// +optional
	VMIName string `json:"vmiName,omitempty"`
	// AddedNodeSelector further restricts the target nodes; it cannot loosen
	// the instance's own node selector or affinity.
	// +optional
	AddedNodeSelector map[string]string `json:"addedNodeSelector,omitempty"`
	// SendTo makes this the source half of a cross-cluster migration.
	// +optional
	SendTo *VirtualMachineInstanceMigrationSource `json:"sendTo,omitempty"`
	// Receive makes this the target half of a cross-cluster migration.
	// +optional
	Receive *VirtualMachineInstanceMigrationTarget `json:"receive,omitempty"`
	// Priority orders this migration among waiting ones.
	// +optional
	Priority *MigrationPriority `json:"priority,omitempty"`
}

// VirtualMachineInstanceMigrationSource is the source half of a cross-cluster migration.
type VirtualMachineInstanceMigrationSource struct {
	// MigrationID pairs source and target.
	MigrationID string `json:"migrationID"`
	// ConnectURL is the target's synchronization address.
	ConnectURL string `json:"connectURL"`
}

// VirtualMachineInstanceMigrationTarget is the target half of a cross-cluster migration.
type VirtualMachineInstanceMigrationTarget struct {
	// MigrationID pairs source and target.
	MigrationID string `json:"migrationID"`
}

// VirtualMachineInstanceMigrationPhase is the phase of a migration.
type VirtualMachineInstanceMigrationPhase string

// Migration phases.
const (
	// MigrationPhaseUnset: nobody has looked at the migration yet.
	MigrationPhaseUnset VirtualMachineInstanceMigrationPhase = ""
	// MigrationPending: accepted, waiting to start.
	MigrationPending VirtualMachineInstanceMigrationPhase = "Pending"
	// MigrationScheduling: the target launcher pod is being scheduled.
	MigrationScheduling VirtualMachineInstanceMigrationPhase = "Scheduling"
	// MigrationScheduled: the target launcher pod runs on a node.
	MigrationScheduled VirtualMachineInstanceMigrationPhase = "Scheduled"
	// MigrationPreparingTarget: the target node prepares to receive the guest.
	MigrationPreparingTarget VirtualMachineInstanceMigrationPhase = "PreparingTarget"
	// MigrationTargetReady: the target is ready to receive.
	MigrationTargetReady VirtualMachineInstanceMigrationPhase = "TargetReady"
	// MigrationRunning: the guest is being transferred.
	MigrationRunning VirtualMachineInstanceMigrationPhase = "Running"
	// MigrationSucceeded: the guest runs on the target. Final.
	MigrationSucceeded VirtualMachineInstanceMigrationPhase = "Succeeded"
	// MigrationFailed: the migration failed; the guest stays on the source. Final.
	MigrationFailed VirtualMachineInstanceMigrationPhase = "Failed"
	// MigrationWaitingForSync: a cross-cluster half waits for its peer.
	MigrationWaitingForSync VirtualMachineInstanceMigrationPhase = "WaitingForSync"
	// MigrationSynchronizing: the two cross-cluster halves exchange state.
	MigrationSynchronizing VirtualMachineInstanceMigrationPhase = "Synchronizing"
)

// VirtualMachineInstanceMigrationConditionType names a condition of a migration.
type VirtualMachineInstanceMigrationConditionType string

// Migration condition types.
const (
	// VirtualMachineInstanceMigrationAbortRequested: an abort was requested.
	VirtualMachineInstanceMigrationAbortRequested VirtualMachineInstanceMigrationConditionType = "migrationAbortRequested"
	// VirtualMachineInstanceMigrationRejectedByResourceQuota: the target pod exceeds a resource quota.
	VirtualMachineInstanceMigrationRejectedByResourceQuota VirtualMachineInstanceMigrationConditionType = "migrationRejectedByResourceQuota"
)

// VirtualMachineInstanceMigrationStatus is the progress of a migration.
type VirtualMachineInstanceMigrationStatus struct {
	// Phase of the migration.
	// +optional
	Phase VirtualMachineInstanceMigrationPhase `json:"phase,omitempty"`
	// Conditions are the latest observations of the migration's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineInstanceMigrationCondition `json:"conditions,omitempty"`
	// PhaseTransitionTimestamps records when each phase was entered.
	// +optional
	// +listType=atomic
	PhaseTransitionTimestamps []VirtualMachineInstanceMigrationPhaseTransitionTimestamp `json:"phaseTransitionTimestamps,omitempty"`
	// MigrationState is the detailed state of the migration.
	// +optional
	MigrationState *VirtualMachineInstanceMigrationState `json:"migrationState,omitempty"`
	// SynchronizationAddresses are the addresses of a cross-cluster migration's synchronization endpoint.
	// +optional
	// +listType=atomic
	SynchronizationAddresses []string `json:"synchronizationAddresses,omitempty"`
}

// VirtualMachineInstanceMigrationCondition is one observation of a migration's state.
type VirtualMachineInstanceMigrationCondition struct {
	// Type of the condition.
	Type VirtualMachineInstanceMigrationConditionType `json:"type"`
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

// VirtualMachineInstanceMigrationPhaseTransitionTimestamp records when a migration phase was entered.
type VirtualMachineInstanceMigrationPhaseTransitionTimestamp struct {
	// Phase entered.
	// +optional
	Phase VirtualMachineInstanceMigrationPhase `json:"phase,omitempty"`
	// PhaseTransitionTimestamp is when it was entered.
	// +optional
	PhaseTransitionTimestamp metav1.Time `json:"phaseTransitionTimestamp,omitempty"`
}

// MigrationAbortStatus is the state of an abort request.
type MigrationAbortStatus string

// Abort states.
const (
	// MigrationAbortSucceeded: the migration was aborted.
	MigrationAbortSucceeded MigrationAbortStatus = "Succeeded"
	// MigrationAbortFailed: the abort failed.
	MigrationAbortFailed MigrationAbortStatus = "Failed"
	// MigrationAbortInProgress: the abort is running.
	MigrationAbortInProgress MigrationAbortStatus = "Aborting"
)

// MigrationMode is the copy mode of a running migration.
type MigrationMode string

// Migration modes.
const (
	// MigrationPreCopy copies memory while the guest runs on the source.
	MigrationPreCopy MigrationMode = "PreCopy"
	// MigrationPostCopy runs the guest on the target and fetches memory on demand.
	MigrationPostCopy MigrationMode = "PostCopy"
	// MigrationPaused pauses the guest to finish the copy.
	MigrationPaused MigrationMode = "Paused"
)

// VirtualMachineInstanceMigrationState is the detailed state of a migration,
// reported on both the instance and the migration object.
type VirtualMachineInstanceMigrationState struct {
	// StartTimestamp is when the transfer started.
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty"`
	// EndTimestamp is when the migration ended.
	// +optional
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty"`
	// TargetNodeDomainReadyTimestamp is when the guest became ready on the target.
	// +optional
	TargetNodeDomainReadyTimestamp *metav1.Time `json:"targetNodeDomainReadyTimestamp,omitempty"`
	// TargetNodeDomainDetected is true once the target node sees the guest.
	// +optional
	TargetNodeDomainDetected bool `json:"targetNodeDomainDetected,omitempty"`
	// TargetNodeAddress is the address the target node receives on.
	// +optional
	TargetNodeAddress string `json:"targetNodeAddress,omitempty"`
	// TargetDirectMigrationNodePorts maps target ports to their purpose.
	// +optional
	TargetDirectMigrationNodePorts map[string]int32 `json:"targetDirectMigrationNodePorts,omitempty"`
	// TargetNode is the node the guest moves to.
	// +optional
	TargetNode string `json:"targetNode,omitempty"`
	// TargetPod is the launcher pod on the target node.
	// +optional
	TargetPod string `json:"targetPod,omitempty"`
	// TargetAttachmentPodUID is the target's hotplug attachment pod.
	// +optional
	TargetAttachmentPodUID types.UID `json:"targetAttachmentPodUID,omitempty"`
	// SourceNode is the node the guest moves from.
	// +optional
	SourceNode string `json:"sourceNode,omitempty"`
	// SourcePod is the launcher pod on the source node.
	// +optional
	SourcePod string `json:"sourcePod,omitempty"`
	// Completed is true once the migration finished (successfully or not).
	// +optional
	Completed bool `json:"completed,omitempty"`
	// Failed is true when the migration failed.
	// +optional
	Failed bool `json:"failed,omitempty"`
	// AbortRequested is true when an abort was requested.
	// +optional
	AbortRequested bool `json:"abortRequested,omitempty"`
	// AbortStatus is the state of the abort.
	// +optional
	AbortStatus MigrationAbortStatus `json:"abortStatus,omitempty"`
	// FailureReason explains a failure.
	// +optional
	FailureReason string `json:"failureReason,omitempty"`
	// MigrationUID is the UID of the migration object.
	// +optional
	MigrationUID types.UID `json:"migrationUid,omitempty"`
	// Mode is the copy mode: PreCopy, PostCopy or Paused.
	// +optional
	Mode MigrationMode `json:"mode,omitempty"`
	// MigrationPolicyName names the migration policy applied.
	// +optional
	MigrationPolicyName *string `json:"migrationPolicyName,omitempty"`
	// TargetCPUSet are the host CPUs the guest uses on the target.
	// +optional
	// +listType=atomic
	TargetCPUSet []int32 `json:"targetCPUSet,omitempty"`
	// TargetNodeTopology is the target node's topology, JSON-encoded.
	// +optional
	TargetNodeTopology string `json:"targetNodeTopology,omitempty"`
	// SourcePersistentStatePVCName is the source's persistent state claim.
	// +optional
	SourcePersistentStatePVCName string `json:"sourcePersistentStatePVCName,omitempty"`
	// TargetPersistentStatePVCName is the target's persistent state claim.
	// +optional
	TargetPersistentStatePVCName string `json:"targetPersistentStatePVCName,omitempty"`
}
