package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataVolumeTemplateSpec is a CDI DataVolume a VirtualMachine creates for
// itself. NativeVirt does not support DataVolumes: the type exists so that
// such manifests decode and can be rejected naming the field. Only the
// commonly used part of CDI's DataVolumeSpec is modelled.
type DataVolumeTemplateSpec struct {
	metav1.TypeMeta `json:",inline"`
	// Metadata of the DataVolume to create.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec of the DataVolume to create.
	Spec DataVolumeSpec `json:"spec"`
	// Status is a placeholder kept for compatibility; always empty.
	// +optional
	Status *DataVolumeTemplateDummyStatus `json:"status,omitempty"`
}

// DataVolumeTemplateDummyStatus is an always-empty status.
type DataVolumeTemplateDummyStatus struct{}

// DataVolumeSpec is the commonly used part of CDI's DataVolume spec.
type DataVolumeSpec struct {
	// Source is where the data is imported from.
	// +optional
	Source *DataVolumeSourceSpec `json:"source,omitempty"`
	// SourceRef points at a DataSource to import from.
	// +optional
	SourceRef *DataVolumeSourceRef `json:"sourceRef,omitempty"`
	// PVC is the claim to create, as a raw claim spec.
	// +optional
	PVC *corev1.PersistentVolumeClaimSpec `json:"pvc,omitempty"`
	// Storage is the claim to create, with defaults filled in by CDI.
	// +optional
	Storage *DataVolumeStorageSpec `json:"storage,omitempty"`
	// PriorityClassName of the importer pod.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// ContentType is kubevirt (a disk image) or archive.
	// +optional
	ContentType string `json:"contentType,omitempty"`
	// Preallocation allocates the volume's space up front.
	// +optional
	Preallocation *bool `json:"preallocation,omitempty"`
}

// DataVolumeSourceSpec is where a DataVolume's data comes from; one member is set.
type DataVolumeSourceSpec struct {
	// HTTP imports from a URL.
	// +optional
	HTTP *DataVolumeSourceHTTP `json:"http,omitempty"`
	// Registry imports from a container image.
	// +optional
	Registry *DataVolumeSourceRegistry `json:"registry,omitempty"`
	// PVC clones another claim.
	// +optional
	PVC *DataVolumeSourcePVC `json:"pvc,omitempty"`
	// Blank creates an empty disk image.
	// +optional
	Blank *DataVolumeBlankImage `json:"blank,omitempty"`
}

// DataVolumeSourceHTTP imports from a URL.
type DataVolumeSourceHTTP struct {
	// URL of the image.
	URL string `json:"url"`
	// SecretRef names a secret with credentials.
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
	// CertConfigMap names a config map with a CA bundle.
	// +optional
	CertConfigMap string `json:"certConfigMap,omitempty"`
}

// DataVolumeSourceRegistry imports from a container image.
type DataVolumeSourceRegistry struct {
	// URL of the image, e.g. docker://quay.io/containerdisks/fedora:latest.
	// +optional
	URL *string `json:"url,omitempty"`
	// SecretRef names a secret with credentials.
	// +optional
	SecretRef *string `json:"secretRef,omitempty"`
	// CertConfigMap names a config map with a CA bundle.
	// +optional
	CertConfigMap *string `json:"certConfigMap,omitempty"`
	// PullMethod is pod or node.
	// +optional
	PullMethod *string `json:"pullMethod,omitempty"`
}

// DataVolumeSourcePVC clones another claim.
type DataVolumeSourcePVC struct {
	// Namespace of the claim.
	Namespace string `json:"namespace"`
	// Name of the claim.
	Name string `json:"name"`
}

// DataVolumeBlankImage creates an empty disk image.
type DataVolumeBlankImage struct{}

// DataVolumeSourceRef points at a DataSource.
type DataVolumeSourceRef struct {
	// Kind is DataSource.
	Kind string `json:"kind"`
	// Namespace of the DataSource; defaults to the DataVolume's.
	// +optional
	Namespace *string `json:"namespace,omitempty"`
	// Name of the DataSource.
	Name string `json:"name"`
}

// DataVolumeStorageSpec is the claim a DataVolume creates.
type DataVolumeStorageSpec struct {
	// AccessModes of the claim.
	// +optional
	// +listType=atomic
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
	// Selector over volumes to bind to.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Resources of the claim (storage request).
	// +optional
	Resources corev1.VolumeResourceRequirements `json:"resources,omitempty"`
	// VolumeName binds to this volume.
	// +optional
	VolumeName string `json:"volumeName,omitempty"`
	// StorageClassName of the claim.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// VolumeMode of the claim.
	// +optional
	VolumeMode *corev1.PersistentVolumeMode `json:"volumeMode,omitempty"`
	// DataSource populates the claim from an object in the same namespace.
	// +optional
	DataSource *corev1.TypedLocalObjectReference `json:"dataSource,omitempty"`
	// DataSourceRef populates the claim from an object.
	// +optional
	DataSourceRef *corev1.TypedObjectReference `json:"dataSourceRef,omitempty"`
}
