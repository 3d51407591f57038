package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Volume is a named source of data for the guest's disks and filesystems.
type Volume struct {
	// Name of the volume; disks and filesystems refer to it.
	Name string `json:"name"`
	// VolumeSource is where the data comes from; exactly one member is set.
	VolumeSource `json:",inline"`
}

// VolumeSource is the source of a volume; exactly one member is set.
type VolumeSource struct {
	// HostDisk is a disk image file on the node.
	// +optional
	HostDisk *HostDisk `json:"hostDisk,omitempty"`
	// PersistentVolumeClaim uses a claim in the guest's namespace.
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
	// CloudInitNoCloud provides cloud-init data through a NoCloud disk.
	// +optional
	CloudInitNoCloud *CloudInitNoCloudSource `json:"cloudInitNoCloud,omitempty"`
	// CloudInitConfigDrive provides cloud-init data through a ConfigDrive disk.
	// +optional
	CloudInitConfigDrive *CloudInitConfigDriveSource `json:"cloudInitConfigDrive,omitempty"`
	// Sysprep provides an unattended Windows answer file.
	// +optional
	Sysprep *SysprepSource `json:"sysprep,omitempty"`
	// ContainerDisk takes a disk image from a container image; changes are
	// lost when the guest stops.
	// +optional
	ContainerDisk *ContainerDiskSource `json:"containerDisk,omitempty"`
	// Ephemeral puts a throw-away copy-on-write layer over a claim.
	// +optional
	Ephemeral *EphemeralVolumeSource `json:"ephemeral,omitempty"`
	// EmptyDisk is a blank disk that lives as long as the instance.
	// +optional
	EmptyDisk *EmptyDiskSource `json:"emptyDisk,omitempty"`
	// DataVolume uses the claim of a CDI DataVolume.
	// +optional
	DataVolume *DataVolumeSource `json:"dataVolume,omitempty"`
	// ConfigMap exposes a config map as a disk or filesystem.
	// +optional
	ConfigMap *ConfigMapVolumeSource `json:"configMap,omitempty"`
	// Secret exposes a secret as a disk or filesystem.
	// +optional
	Secret *SecretVolumeSource `json:"secret,omitempty"`
	// DownwardAPI exposes pod fields as a disk or filesystem.
	// +optional
	DownwardAPI *DownwardAPIVolumeSource `json:"downwardAPI,omitempty"`
	// ServiceAccount exposes a service account token as a disk or filesystem.
	// +optional
	ServiceAccount *ServiceAccountVolumeSource `json:"serviceAccount,omitempty"`
	// DownwardMetrics exposes host metrics as a disk.
	// +optional
	DownwardMetrics *DownwardMetricsVolumeSource `json:"downwardMetrics,omitempty"`
	// MemoryDump is a claim that receives memory dumps of the guest.
	// +optional
	MemoryDump *MemoryDumpVolumeSource `json:"memoryDump,omitempty"`
}

// HostDiskType says whether a host disk must exist.
type HostDiskType string

// Host disk types.
const (
	// HostDiskExistsOrCreate creates the image when it does not exist.
	HostDiskExistsOrCreate HostDiskType = "DiskOrCreate"
	// HostDiskExists requires the image to exist.
	HostDiskExists HostDiskType = "Disk"
)

// HostDisk is a disk image file on the node.
type HostDisk struct {
	// Path of the image file on the node.
	Path string `json:"path"`
	// Type is Disk (must exist) or DiskOrCreate.
	Type HostDiskType `json:"type"`
	// Capacity of an image that is created.
	// +optional
	Capacity resource.Quantity `json:"capacity,omitempty"`
	// Shared says the image is on storage shared between nodes.
	// +optional
	Shared *bool `json:"shared,omitempty"`
}

// PersistentVolumeClaimVolumeSource uses a persistent volume claim.
type PersistentVolumeClaimVolumeSource struct {
	// PersistentVolumeClaimVolumeSource names the claim, as for pods.
	corev1.PersistentVolumeClaimVolumeSource `json:",inline"`
	// Hotpluggable says the volume was (or may be) hotplugged.
	// +optional
	Hotpluggable bool `json:"hotpluggable,omitempty"`
}

// MemoryDumpVolumeSource is a claim that receives memory dumps.
type MemoryDumpVolumeSource struct {
	// PersistentVolumeClaimVolumeSource names the claim.
	PersistentVolumeClaimVolumeSource `json:",inline"`
}

// CloudInitNoCloudSource provides cloud-init data through a NoCloud disk.
// User data comes from userData, userDataBase64 or secretRef (one of them);
// network data likewise.
type CloudInitNoCloudSource struct {
	// UserDataSecretRef names a secret holding the user data (key userdata or userData).
	// +optional
	UserDataSecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
	// UserDataBase64 is the user data, base64-encoded.
	// +optional
	UserDataBase64 string `json:"userDataBase64,omitempty"`
	// UserData is the user data as plain text.
	// +optional
	UserData string `json:"userData,omitempty"`
	// NetworkDataSecretRef names a secret holding the network data (key networkdata or networkData).
	// +optional
	NetworkDataSecretRef *corev1.LocalObjectReference `json:"networkDataSecretRef,omitempty"`
	// NetworkDataBase64 is the network data, base64-encoded.
	// +optional
	NetworkDataBase64 string `json:"networkDataBase64,omitempty"`
	// NetworkData is the network data as plain text.
	// +optional
	NetworkData string `json:"networkData,omitempty"`
}

// CloudInitConfigDriveSource provides cloud-init data through a ConfigDrive
// disk. User data comes from userData, userDataBase64 or secretRef (one of
// them); network data likewise.
type CloudInitConfigDriveSource struct {
	// UserDataSecretRef names a secret holding the user data (key userdata or userData).
	// +optional
	UserDataSecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
	// UserDataBase64 is the user data, base64-encoded.
	// +optional
	UserDataBase64 string `json:"userDataBase64,omitempty"`
	// UserData is the user data as plain text.
	// +optional
	UserData string `json:"userData,omitempty"`
	// NetworkDataSecretRef names a secret holding the network data (key networkdata or networkData).
	// +optional
	NetworkDataSecretRef *corev1.LocalObjectReference `json:"networkDataSecretRef,omitempty"`
	// NetworkDataBase64 is the network data, base64-encoded.
	// +optional
	NetworkDataBase64 string `json:"networkDataBase64,omitempty"`
	// NetworkData is the network data as plain text.
	// +optional
	NetworkData string `json:"networkData,omitempty"`
}

// SysprepSource provides an unattended Windows answer file from a secret or config map.
type SysprepSource struct {
	// Secret holding autounattend.xml or unattend.xml.
	// +optional
	Secret *corev1.LocalObjectReference `json:"secret,omitempty"`
	// ConfigMap holding autounattend.xml or unattend.xml.
	// +optional
	ConfigMap *corev1.LocalObjectReference `json:"configMap,omitempty"`
}

// ContainerDiskSource takes a disk image from a container image.
type ContainerDiskSource struct {
	// Image is the container image holding the disk image.
	Image string `json:"image"`
	// ImagePullSecret names the secret used to pull the image.
	// +optional
	ImagePullSecret string `json:"imagePullSecret,omitempty"`
	// Path of the disk image inside the container image; by default the
	// single file under /disk.
	// +optional
	Path string `json:"path,omitempty"`
	// ImagePullPolicy is Always, Never or IfNotPresent.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
}

// EphemeralVolumeSource layers a throw-away overlay over a claim.
type EphemeralVolumeSource struct {
	// PersistentVolumeClaim is the read-only base of the overlay.
	// +optional
	PersistentVolumeClaim *corev1.PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
}

// EmptyDiskSource is a blank disk living as long as the instance.
type EmptyDiskSource struct {
	// Capacity of the disk.
	Capacity resource.Quantity `json:"capacity"`
}

// DataVolumeSource uses the claim of a CDI DataVolume.
type DataVolumeSource struct {
	// Name of the DataVolume in the guest's namespace.
	Name string `json:"name"`
	// Hotpluggable says the volume was (or may be) hotplugged.
	// +optional
	Hotpluggable bool `json:"hotpluggable,omitempty"`
}

// ConfigMapVolumeSource exposes a config map to the guest.
type ConfigMapVolumeSource struct {
	// LocalObjectReference names the config map.
	corev1.LocalObjectReference `json:",inline"`
	// Optional lets the guest start when the config map does not exist.
	// +optional
	Optional *bool `json:"optional,omitempty"`
	// VolumeLabel is the filesystem label of the generated disk.
	// +optional
	VolumeLabel string `json:"volumeLabel,omitempty"`
}

// SecretVolumeSource exposes a secret to the guest.
type SecretVolumeSource struct {
	// SecretName names the secret.
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// Optional lets the guest start when the secret does not exist.
	// +optional
	Optional *bool `json:"optional,omitempty"`
	// VolumeLabel is the filesystem label of the generated disk.
	// +optional
	VolumeLabel string `json:"volumeLabel,omitempty"`
}

// DownwardAPIVolumeSource exposes pod fields to the guest.
type DownwardAPIVolumeSource struct {
	// Fields are the files to create, as for pods.
	// +optional
	// +listType=atomic
	Fields []corev1.DownwardAPIVolumeFile `json:"fields,omitempty"`
	// VolumeLabel is the filesystem label of the generated disk.
	// +optional
	VolumeLabel string `json:"volumeLabel,omitempty"`
}

// ServiceAccountVolumeSource exposes a service account token to the guest.
type ServiceAccountVolumeSource struct {
	// ServiceAccountName names the service account.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// DownwardMetricsVolumeSource exposes host metrics to the guest as a disk.
type DownwardMetricsVolumeSource struct{}
