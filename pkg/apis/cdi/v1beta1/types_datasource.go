package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataSource names a source of data (a claim or a snapshot, typically a golden image) that
// DataVolumes refer to with spec.sourceRef.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DataSource struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the source the DataSource names.
	Spec DataSourceSpec `json:"spec"`
	// Status is the source as resolved, and whether it is ready, written by the controller.
	// +optional
	Status DataSourceStatus `json:"status,omitempty"`
}

// DataSourceList is a list of DataSources.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DataSourceList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the DataSources of the list.
	Items []DataSource `json:"items"`
}

// DataSourceSpec is the source a DataSource names.
type DataSourceSpec struct {
	// Source is the data: exactly one of pvc, snapshot and dataSource.
	Source DataSourceSource `json:"source"`
}

// DataSourceSource is a DataSource's data: a claim, a snapshot or another DataSource.
type DataSourceSource struct {
	// PVC names a PersistentVolumeClaim.
	// +optional
	PVC *DataVolumeSourcePVC `json:"pvc,omitempty"`
	// Snapshot names a VolumeSnapshot.
	// +optional
	Snapshot *DataVolumeSourceSnapshot `json:"snapshot,omitempty"`
	// DataSource names another DataSource (which itself must not refer to a DataSource).
	// +optional
	DataSource *DataSourceRefSourceDataSource `json:"dataSource,omitempty"`
}

// DataSourceStatus is the observed state of a DataSource.
type DataSourceStatus struct {
	// Source is the source currently resolved.
	// +optional
	Source DataSourceSource `json:"source,omitempty"`
	// Conditions are the latest observations: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []DataSourceCondition `json:"conditions,omitempty" optional:"true" patchStrategy:"merge" patchMergeKey:"type"`
}

// DataSourceCondition is one observation of a DataSource's state.
type DataSourceCondition struct {
	// Type is Ready.
	Type DataSourceConditionType `json:"type"`
	// ConditionState is the condition's status, times, reason and message.
	ConditionState `json:",inline"`
}

// DataSourceConditionType is the type of a DataSource condition.
type DataSourceConditionType string

// DataSourceReady says the DataSource's source exists and can be used.
const DataSourceReady DataSourceConditionType = "Ready"

// ConditionState is the state of a condition.
type ConditionState struct {
	// Status is True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// LastHeartbeatTime is when the condition was last observed.
	// +optional
	LastHeartbeatTime metav1.Time `json:"lastHeartbeatTime,omitempty"`
	// Reason is a machine-readable reason of the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable account of the last transition.
	// +optional
	Message string `json:"message,omitempty"`
}
