package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VirtualMachineInstanceReplicaSet keeps a number of identical
// VirtualMachineInstances running, as a ReplicaSet does for pods.
//
// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceReplicaSet struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired number of instances and their template.
	Spec VirtualMachineInstanceReplicaSetSpec `json:"spec"`
	// Status is the observed state, written by NativeVirt.
	// +optional
	Status VirtualMachineInstanceReplicaSetStatus `json:"status,omitempty"`
}

// VirtualMachineInstanceReplicaSetList is a list of replica sets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceReplicaSetList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the replica sets of the list.
	Items []VirtualMachineInstanceReplicaSet `json:"items"`
}

// VirtualMachineInstanceReplicaSetSpec is the desired state of a replica set.
type VirtualMachineInstanceReplicaSetSpec struct {
	// Replicas is the number of instances wanted. Defaults to 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector selects the instances the replica set owns; it must match the
	// template's labels.
	Selector *metav1.LabelSelector `json:"selector"`
	// Template is the instance created for each missing replica.
	Template *VirtualMachineInstanceTemplateSpec `json:"template"`
	// Paused stops the replica set from creating or deleting instances.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// VirtualMachineInstanceReplicaSetStatus is the observed state of a replica set.
type VirtualMachineInstanceReplicaSetStatus struct {
	// Replicas is the number of instances that exist.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas is the number of those that are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Conditions are the latest observations of the replica set's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineInstanceReplicaSetCondition `json:"conditions,omitempty"`
	// LabelSelector is the selector in string form, for the scale subresource.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// VirtualMachineInstanceReplicaSetConditionType names a condition of a replica set.
type VirtualMachineInstanceReplicaSetConditionType string

// Replica set condition types.
const (
	// VirtualMachineInstanceReplicaSetReplicaFailure: creating or deleting an instance failed.
	VirtualMachineInstanceReplicaSetReplicaFailure VirtualMachineInstanceReplicaSetConditionType = "ReplicaFailure"
	// VirtualMachineInstanceReplicaSetReplicaPaused: the replica set is paused.
	VirtualMachineInstanceReplicaSetReplicaPaused VirtualMachineInstanceReplicaSetConditionType = "ReplicaPaused"
)

// VirtualMachineInstanceReplicaSetCondition is one observation of a replica set's state.
type VirtualMachineInstanceReplicaSetCondition struct {
	// Type of the condition.
	Type VirtualMachineInstanceReplicaSetConditionType `json:"type"`
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
