package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// DataVolumeTemplateSpec is a CDI DataVolume a VirtualMachine creates for itself, named by its
// metadata.name and owned by the VirtualMachine (collected with it).
type DataVolumeTemplateSpec struct {
	metav1.TypeMeta `json:",inline"`
	// Metadata of the DataVolume to create.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec of the DataVolume to create: CDI's DataVolumeSpec.
	Spec cdiv1beta1.DataVolumeSpec `json:"spec"`
	// Status is a placeholder kept for compatibility; always empty.
	// +optional
	Status *DataVolumeTemplateDummyStatus `json:"status,omitempty"`
}

// DataVolumeTemplateDummyStatus is an always-empty status.
type DataVolumeTemplateDummyStatus struct{}
