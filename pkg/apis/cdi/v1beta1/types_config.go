package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageProfile holds CDI's recommendations for the claims of one storage class (it has the
// storage class's name): access and volume modes, and the clone strategy.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type StorageProfile struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is what an administrator sets for the storage class.
	Spec StorageProfileSpec `json:"spec"`
	// Status is the profile as computed from the spec and the storage class.
	// +optional
	Status StorageProfileStatus `json:"status,omitempty"`
}

// StorageProfileList is a list of StorageProfiles.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type StorageProfileList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the StorageProfiles of the list.
	Items []StorageProfile `json:"items"`
}

// StorageProfileSpec is what an administrator sets for a storage class.
type StorageProfileSpec struct {
	// CloneStrategy is the preferred way to clone: copy, snapshot or csi-clone.
	// +optional
	CloneStrategy *CDICloneStrategy `json:"cloneStrategy,omitempty"`
	// ClaimPropertySets are the access and volume modes claims of this class get (at most 8).
	// +optional
	// +listType=atomic
	ClaimPropertySets []ClaimPropertySet `json:"claimPropertySets,omitempty"`
	// DataImportCronSourceFormat is the format of the sources DataImportCrons create: pvc or snapshot.
	// +optional
	DataImportCronSourceFormat *DataImportCronSourceFormat `json:"dataImportCronSourceFormat,omitempty"`
	// SnapshotClass is the VolumeSnapshotClass of snapshot clones; chosen by provisioner when unset.
	// +optional
	SnapshotClass *string `json:"snapshotClass,omitempty"`
}

// StorageProfileStatus is a StorageProfile as computed.
type StorageProfileStatus struct {
	// StorageClass is the name of the storage class.
	// +optional
	StorageClass *string `json:"storageClass,omitempty"`
	// Provisioner is the storage class's provisioner.
	// +optional
	Provisioner *string `json:"provisioner,omitempty"`
	// CloneStrategy is the clone strategy in effect.
	// +optional
	CloneStrategy *CDICloneStrategy `json:"cloneStrategy,omitempty"`
	// ClaimPropertySets are the access and volume modes in effect.
	// +optional
	// +listType=atomic
	ClaimPropertySets []ClaimPropertySet `json:"claimPropertySets,omitempty"`
	// DataImportCronSourceFormat is the source format in effect.
	// +optional
	DataImportCronSourceFormat *DataImportCronSourceFormat `json:"dataImportCronSourceFormat,omitempty"`
	// SnapshotClass is the VolumeSnapshotClass in effect.
	// +optional
	SnapshotClass *string `json:"snapshotClass,omitempty"`
}

// ClaimPropertySet is a set of properties of a claim.
type ClaimPropertySet struct {
	// AccessModes are the access modes (ReadWriteOnce, ReadOnlyMany, ReadWriteMany,
	// ReadWriteOncePod; at most 4).
	// +listType=atomic
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes"`
	// VolumeMode is Filesystem or Block.
	VolumeMode *corev1.PersistentVolumeMode `json:"volumeMode"`
}

// CDICloneStrategy is a way to clone a claim.
type CDICloneStrategy string

// The clone strategies.
const (
	CloneStrategyHostAssisted CDICloneStrategy = "copy"
	CloneStrategySnapshot     CDICloneStrategy = "snapshot"
	CloneStrategyCsiClone     CDICloneStrategy = "csi-clone"
)

// DataImportCronSourceFormat is the format of the sources a DataImportCron creates.
type DataImportCronSourceFormat string

// The source formats.
const (
	DataImportCronSourceFormatSnapshot DataImportCronSourceFormat = "snapshot"
	DataImportCronSourceFormatPvc      DataImportCronSourceFormat = "pvc"
)

// CDIConfig is the cluster's settings of CDI: one object, named `config`.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type CDIConfig struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is what an administrator sets.
	Spec CDIConfigSpec `json:"spec"`
	// Status is the configuration in effect.
	// +optional
	Status CDIConfigStatus `json:"status,omitempty"`
}

// CDIConfigList is a list of CDIConfigs.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type CDIConfigList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the CDIConfigs of the list.
	Items []CDIConfig `json:"items"`
}

// Percent is a fraction between 0 and 1 written as a string ("0.055"), up to three decimals.
type Percent string

// FilesystemOverhead is the space reserved on Filesystem volumes for the file system itself.
type FilesystemOverhead struct {
	// Global is the overhead of every storage class without its own.
	// +optional
	Global Percent `json:"global,omitempty"`
	// StorageClass maps storage class names to their overhead.
	// +optional
	StorageClass map[string]Percent `json:"storageClass,omitempty"`
}

// CDIConfigSpec is what an administrator sets.
type CDIConfigSpec struct {
	// UploadProxyURLOverride is the upload proxy's URL clients use (virtctl image-upload).
	// +optional
	UploadProxyURLOverride *string `json:"uploadProxyURLOverride,omitempty"`
	// ImportProxy is the proxy importer pods use.
	// +optional
	ImportProxy *ImportProxy `json:"importProxy,omitempty"`
	// ScratchSpaceStorageClass is the storage class of scratch space during transfers; else the
	// default storage class, else the DataVolume's.
	// +optional
	ScratchSpaceStorageClass *string `json:"scratchSpaceStorageClass,omitempty"`
	// PodResourceRequirements are the resources of importer, cloner and upload pods.
	// +optional
	PodResourceRequirements *corev1.ResourceRequirements `json:"podResourceRequirements,omitempty"`
	// FeatureGates are CDI feature gates turned on.
	// +optional
	// +listType=atomic
	FeatureGates []string `json:"featureGates,omitempty"`
	// FilesystemOverhead is the space reserved on Filesystem volumes (0.06 when unset).
	// +optional
	FilesystemOverhead *FilesystemOverhead `json:"filesystemOverhead,omitempty"`
	// Preallocation says whether DataVolumes' storage is allocated in advance by default.
	// +optional
	Preallocation *bool `json:"preallocation,omitempty"`
	// InsecureRegistries are registries reached without TLS verification.
	// +optional
	// +listType=atomic
	InsecureRegistries []string `json:"insecureRegistries,omitempty"`
	// DataVolumeTTLSeconds is deprecated (removed in CDI v1.62) and ignored.
	// +optional
	DataVolumeTTLSeconds *int32 `json:"dataVolumeTTLSeconds,omitempty"`
	// ImagePullSecrets are used to pull the importer, cloner and upload images.
	// +optional
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// LogVerbosity is the log verbosity of CDI's pods.
	// +optional
	LogVerbosity *int32 `json:"logVerbosity,omitempty"`
}

// CDIConfigStatus is the configuration in effect.
type CDIConfigStatus struct {
	// UploadProxyURL is the upload proxy's URL.
	// +optional
	UploadProxyURL *string `json:"uploadProxyURL,omitempty"`
	// UploadProxyCA is the certificate authority of the upload proxy.
	// +optional
	UploadProxyCA *string `json:"uploadProxyCA,omitempty"`
	// ImportProxy is the proxy importer pods use.
	// +optional
	ImportProxy *ImportProxy `json:"importProxy,omitempty"`
	// ScratchSpaceStorageClass is the storage class of scratch space.
	// +optional
	ScratchSpaceStorageClass string `json:"scratchSpaceStorageClass,omitempty"`
	// DefaultPodResourceRequirements are the resources of importer, cloner and upload pods.
	// +optional
	DefaultPodResourceRequirements *corev1.ResourceRequirements `json:"defaultPodResourceRequirements,omitempty"`
	// FilesystemOverhead is the space reserved on Filesystem volumes.
	// +optional
	FilesystemOverhead *FilesystemOverhead `json:"filesystemOverhead,omitempty"`
	// Preallocation says whether storage is allocated in advance by default.
	// +optional
	Preallocation bool `json:"preallocation,omitempty"`
	// ImagePullSecrets are used to pull the importer, cloner and upload images.
	// +optional
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
}

// ImportProxy is the proxy importer pods use.
type ImportProxy struct {
	// HTTPProxy is the proxy of http requests (http://user:password@host:port).
	// +optional
	HTTPProxy *string `json:"HTTPProxy,omitempty"`
	// HTTPSProxy is the proxy of https requests.
	// +optional
	HTTPSProxy *string `json:"HTTPSProxy,omitempty"`
	// NoProxy is a comma-separated list of host names and CIDRs reached without the proxy.
	// +optional
	NoProxy *string `json:"noProxy,omitempty"`
	// TrustedCAProxy names a ConfigMap holding the proxy's certificate authority.
	// +optional
	TrustedCAProxy *string `json:"trustedCAProxy,omitempty"`
}
