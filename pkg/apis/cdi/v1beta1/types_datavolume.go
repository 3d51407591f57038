package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataVolume is an abstraction on top of PersistentVolumeClaims: a claim together with where its
// data comes from (an HTTP or registry import, a clone of another claim or snapshot, an upload, or
// a blank disk), which VirtualMachines can use as a disk.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DataVolume struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the claim to create and the source of its data. It cannot change once created.
	Spec DataVolumeSpec `json:"spec"`
	// Status is the progress of populating the claim, written by the controller.
	// +optional
	Status DataVolumeStatus `json:"status,omitempty"`
}

// DataVolumeList is a list of DataVolumes.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DataVolumeList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the DataVolumes of the list.
	Items []DataVolume `json:"items"`
}

// DataVolumeSpec is the claim a DataVolume creates and the source of its data.
type DataVolumeSpec struct {
	// Source is where the data comes from. Exactly one of source and sourceRef is set.
	// +optional
	Source *DataVolumeSource `json:"source,omitempty"`
	// SourceRef is an indirect reference to the source of the data: a DataSource.
	// +optional
	SourceRef *DataVolumeSourceRef `json:"sourceRef,omitempty"`
	// PVC is the claim's specification, used verbatim. Exactly one of pvc and storage is set.
	// +optional
	PVC *corev1.PersistentVolumeClaimSpec `json:"pvc,omitempty"`
	// Storage is the claim's specification, completed from the storage class's StorageProfile
	// (access modes, volume mode) and enlarged by the filesystem overhead.
	// +optional
	Storage *StorageSpec `json:"storage,omitempty"`
	// PriorityClassName is the priority class of the importer, cloner and upload pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// ContentType is what the data is: "kubevirt" (a disk image, the default) or "archive" (a tar
	// archive extracted into the volume).
	// +optional
	ContentType DataVolumeContentType `json:"contentType,omitempty"`
	// Checkpoints are the stages of a multistage import.
	// +optional
	// +listType=atomic
	Checkpoints []DataVolumeCheckpoint `json:"checkpoints,omitempty"`
	// FinalCheckpoint says whether the current checkpoint is the last one.
	// +optional
	FinalCheckpoint bool `json:"finalCheckpoint,omitempty"`
	// Preallocation says whether the volume's storage is allocated in advance.
	// +optional
	Preallocation *bool `json:"preallocation,omitempty"`
}

// StorageSpec is a claim's specification of which omitted fields are filled from the
// StorageProfile of its storage class.
type StorageSpec struct {
	// AccessModes are the access modes the volume should have; from the StorageProfile when empty.
	// +optional
	// +listType=atomic
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
	// Selector is a label query over volumes to consider for binding.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Resources are the minimum resources the volume should have. The size (requests.storage)
	// may be omitted when cloning: the source's size is used.
	// +optional
	Resources corev1.VolumeResourceRequirements `json:"resources,omitempty"`
	// VolumeName binds the claim to this PersistentVolume.
	// +optional
	VolumeName string `json:"volumeName,omitempty"`
	// StorageClassName is the claim's storage class; the default storage class when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// VolumeMode is Filesystem or Block; from the StorageProfile when unset.
	// +optional
	VolumeMode *corev1.PersistentVolumeMode `json:"volumeMode,omitempty"`
	// DataSource is the claim's data source (a VolumeSnapshot or a PersistentVolumeClaim).
	// +optional
	DataSource *corev1.TypedLocalObjectReference `json:"dataSource,omitempty"`
	// DataSourceRef is the object the claim is populated from (a volume populator).
	// +optional
	DataSourceRef *corev1.TypedObjectReference `json:"dataSourceRef,omitempty"`
}

// PersistentVolumeFromStorageProfile is the volume mode that asks for the StorageProfile's.
const PersistentVolumeFromStorageProfile corev1.PersistentVolumeMode = "FromStorageProfile"

// DataVolumeCheckpoint is one stage of a multistage (warm) import.
type DataVolumeCheckpoint struct {
	// Previous is the identifier of the snapshot of the previous checkpoint.
	Previous string `json:"previous"`
	// Current is the identifier of the snapshot of this checkpoint.
	Current string `json:"current"`
}

// DataVolumeContentType is the kind of data imported.
type DataVolumeContentType string

// The content types.
const (
	// DataVolumeKubeVirt is a disk image (raw, qcow2, ...); the default.
	DataVolumeKubeVirt DataVolumeContentType = "kubevirt"
	// DataVolumeArchive is a tar archive, extracted into the volume.
	DataVolumeArchive DataVolumeContentType = "archive"
)

// DataVolumeSource is the source of a DataVolume's data: exactly one of its fields is set.
type DataVolumeSource struct {
	// HTTP imports a disk image from an http or https URL.
	// +optional
	HTTP *DataVolumeSourceHTTP `json:"http,omitempty"`
	// S3 imports from an S3 bucket (not supported by NativeVirt yet).
	// +optional
	S3 *DataVolumeSourceS3 `json:"s3,omitempty"`
	// GCS imports from Google Cloud Storage (not supported by NativeVirt yet).
	// +optional
	GCS *DataVolumeSourceGCS `json:"gcs,omitempty"`
	// Registry imports a disk image from a container image.
	// +optional
	Registry *DataVolumeSourceRegistry `json:"registry,omitempty"`
	// PVC clones an existing PersistentVolumeClaim.
	// +optional
	PVC *DataVolumeSourcePVC `json:"pvc,omitempty"`
	// Upload waits for the data to be uploaded through the upload proxy.
	// +optional
	Upload *DataVolumeSourceUpload `json:"upload,omitempty"`
	// Blank creates an empty raw disk image.
	// +optional
	Blank *DataVolumeBlankImage `json:"blank,omitempty"`
	// Imageio imports from oVirt (not supported by NativeVirt yet).
	// +optional
	Imageio *DataVolumeSourceImageIO `json:"imageio,omitempty"`
	// VDDK imports from VMware (not supported by NativeVirt yet).
	// +optional
	VDDK *DataVolumeSourceVDDK `json:"vddk,omitempty"`
	// Snapshot restores an existing VolumeSnapshot.
	// +optional
	Snapshot *DataVolumeSourceSnapshot `json:"snapshot,omitempty"`
}

// DataVolumeSourcePVC names the claim a DataVolume clones.
type DataVolumeSourcePVC struct {
	// Namespace is the namespace of the source claim.
	Namespace string `json:"namespace"`
	// Name is the name of the source claim.
	Name string `json:"name"`
}

// DataVolumeSourceSnapshot names the VolumeSnapshot a DataVolume is restored from.
type DataVolumeSourceSnapshot struct {
	// Namespace is the namespace of the source VolumeSnapshot.
	Namespace string `json:"namespace"`
	// Name is the name of the source VolumeSnapshot.
	Name string `json:"name"`
}

// DataSourceRefSourceDataSource refers to another DataSource (a chain of at most one reference).
type DataSourceRefSourceDataSource struct {
	// Namespace is the namespace of the source DataSource.
	Namespace string `json:"namespace"`
	// Name is the name of the source DataSource.
	Name string `json:"name"`
}

// DataVolumeBlankImage creates an empty raw disk image.
type DataVolumeBlankImage struct{}

// DataVolumeSourceUpload populates the claim with data uploaded through the upload proxy.
type DataVolumeSourceUpload struct{}

// DataVolumeSourceS3 imports from an S3 bucket.
type DataVolumeSourceS3 struct {
	// URL is the URL of the S3 object.
	URL string `json:"url"`
	// SecretRef names the Secret with the credentials of the bucket.
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
	// CertConfigMap names a ConfigMap holding the certificate authority to trust.
	// +optional
	CertConfigMap string `json:"certConfigMap,omitempty"`
}

// DataVolumeSourceGCS imports from Google Cloud Storage.
type DataVolumeSourceGCS struct {
	// URL is the URL of the GCS object.
	URL string `json:"url"`
	// SecretRef names the Secret with the credentials.
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
}

// DataVolumeSourceRegistry imports a disk image held in a container image.
type DataVolumeSourceRegistry struct {
	// URL is the image's URL, starting with its scheme: docker:// or oci-archive://. Exactly one of
	// url and imageStream is set.
	// +optional
	URL *string `json:"url,omitempty"`
	// ImageStream is the name of an OpenShift image stream to import.
	// +optional
	ImageStream *string `json:"imageStream,omitempty"`
	// PullMethod is "pod" (the importer pod pulls the image, the default) or "node" (the node's
	// container runtime pulls it).
	// +optional
	PullMethod *RegistryPullMethod `json:"pullMethod,omitempty"`
	// SecretRef names the Secret with the registry's credentials.
	// +optional
	SecretRef *string `json:"secretRef,omitempty"`
	// CertConfigMap names a ConfigMap holding the registry's certificate authority.
	// +optional
	CertConfigMap *string `json:"certConfigMap,omitempty"`
	// Platform selects the image of a multi-architecture manifest.
	// +optional
	Platform *PlatformOptions `json:"platform,omitempty"`
}

// PlatformOptions are the runtime requirements of an image.
type PlatformOptions struct {
	// Architecture is the image's target CPU architecture.
	// +optional
	Architecture string `json:"architecture,omitempty"`
}

// The URL schemes of registry sources.
const (
	RegistrySchemeDocker = "docker"
	RegistrySchemeOci    = "oci-archive"
)

// RegistryPullMethod is how a registry image is pulled.
type RegistryPullMethod string

// The pull methods.
const (
	// RegistryPullPod: the importer pod pulls the image (the default).
	RegistryPullPod RegistryPullMethod = "pod"
	// RegistryPullNode: the node's container runtime pulls the image.
	RegistryPullNode RegistryPullMethod = "node"
)

// DataVolumeSourceHTTP imports from an http or https URL, with optional basic authentication and
// certificate authority.
type DataVolumeSourceHTTP struct {
	// URL is the URL of the disk image (http or https).
	URL string `json:"url"`
	// SecretRef names a Secret holding accessKeyId (the user name) and secretKey (the password).
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
	// CertConfigMap names a ConfigMap holding the certificate authority to trust.
	// +optional
	CertConfigMap string `json:"certConfigMap,omitempty"`
	// ExtraHeaders are extra headers ("Name: value") sent with the transfer's requests.
	// +optional
	// +listType=atomic
	ExtraHeaders []string `json:"extraHeaders,omitempty"`
	// SecretExtraHeaders name Secrets, each holding an extra header that may be sensitive.
	// +optional
	// +listType=atomic
	SecretExtraHeaders []string `json:"secretExtraHeaders,omitempty"`
}

// DataVolumeSourceImageIO imports from oVirt's imageio.
type DataVolumeSourceImageIO struct {
	// URL is the URL of the ovirt-engine.
	URL string `json:"url"`
	// DiskID is the ID of the disk to import.
	DiskID string `json:"diskId"`
	// SecretRef names the Secret with the ovirt-engine's credentials.
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
	// CertConfigMap names a ConfigMap holding the certificate authority to trust.
	// +optional
	CertConfigMap string `json:"certConfigMap,omitempty"`
	// InsecureSkipVerify skips certificate verification.
	// +optional
	InsecureSkipVerify *bool `json:"insecureSkipVerify,omitempty"`
}

// DataVolumeSourceVDDK imports from VMware.
type DataVolumeSourceVDDK struct {
	// URL is the URL of the vCenter or ESXi host.
	// +optional
	URL string `json:"url,omitempty"`
	// UUID is the UUID of the virtual machine the backing file is attached to.
	// +optional
	UUID string `json:"uuid,omitempty"`
	// BackingFile is the path of the virtual disk to import.
	// +optional
	BackingFile string `json:"backingFile,omitempty"`
	// Thumbprint is the certificate thumbprint of the host.
	// +optional
	Thumbprint string `json:"thumbprint,omitempty"`
	// SecretRef names the Secret with the host's user name and password.
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
	// InitImageURL is an image holding the VDDK library.
	// +optional
	InitImageURL string `json:"initImageURL,omitempty"`
	// ExtraArgs names a ConfigMap of extra arguments to the VDDK library.
	// +optional
	ExtraArgs string `json:"extraArgs,omitempty"`
}

// DataVolumeSourceRef refers to the source of a DataVolume's data indirectly.
type DataVolumeSourceRef struct {
	// Kind is the kind of the reference: only "DataSource".
	Kind string `json:"kind"`
	// Namespace is the namespace of the DataSource; the DataVolume's when unset.
	// +optional
	Namespace *string `json:"namespace,omitempty"`
	// Name is the name of the DataSource.
	Name string `json:"name"`
}

// DataVolumeDataSource is the kind of a sourceRef naming a DataSource.
const DataVolumeDataSource = "DataSource"

// DataVolumeStatus is the progress of a DataVolume.
type DataVolumeStatus struct {
	// ClaimName is the name of the DataVolume's PersistentVolumeClaim.
	// +optional
	ClaimName string `json:"claimName,omitempty"`
	// Phase is where the DataVolume is in its life.
	// +optional
	Phase DataVolumePhase `json:"phase,omitempty"`
	// Progress is the transfer's progress in percent ("45.50%"), or "N/A".
	// +optional
	Progress DataVolumeProgress `json:"progress,omitempty"`
	// RestartCount is how often the pod populating the claim has restarted.
	// +optional
	RestartCount int32 `json:"restartCount,omitempty"`
	// Conditions are the latest observations: Ready, Bound and Running.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []DataVolumeCondition `json:"conditions,omitempty" optional:"true" patchStrategy:"merge" patchMergeKey:"type"`
}

// DataVolumeCondition is one observation of a DataVolume's state.
type DataVolumeCondition struct {
	// Type is Ready, Bound or Running.
	Type DataVolumeConditionType `json:"type"`
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

// DataVolumePhase is the phase of a DataVolume.
type DataVolumePhase string

// DataVolumeProgress is a transfer's progress: a percentage between 0 and 100, or "N/A".
type DataVolumeProgress string

// DataVolumeConditionType is the type of a DataVolume condition.
type DataVolumeConditionType string

// The phases of a DataVolume, as CDI names them.
const (
	PhaseUnset                        DataVolumePhase = ""
	Pending                           DataVolumePhase = "Pending"
	PVCBound                          DataVolumePhase = "PVCBound"
	ImportScheduled                   DataVolumePhase = "ImportScheduled"
	ImportInProgress                  DataVolumePhase = "ImportInProgress"
	CloneScheduled                    DataVolumePhase = "CloneScheduled"
	CloneInProgress                   DataVolumePhase = "CloneInProgress"
	SnapshotForSmartCloneInProgress   DataVolumePhase = "SnapshotForSmartCloneInProgress"
	CloneFromSnapshotSourceInProgress DataVolumePhase = "CloneFromSnapshotSourceInProgress"
	SmartClonePVCInProgress           DataVolumePhase = "SmartClonePVCInProgress"
	CSICloneInProgress                DataVolumePhase = "CSICloneInProgress"
	ExpansionInProgress               DataVolumePhase = "ExpansionInProgress"
	NamespaceTransferInProgress       DataVolumePhase = "NamespaceTransferInProgress"
	UploadScheduled                   DataVolumePhase = "UploadScheduled"
	UploadReady                       DataVolumePhase = "UploadReady"
	WaitForFirstConsumer              DataVolumePhase = "WaitForFirstConsumer"
	PendingPopulation                 DataVolumePhase = "PendingPopulation"
	Succeeded                         DataVolumePhase = "Succeeded"
	Failed                            DataVolumePhase = "Failed"
	Unknown                           DataVolumePhase = "Unknown"
	Paused                            DataVolumePhase = "Paused"
	PrepClaimInProgress               DataVolumePhase = "PrepClaimInProgress"
	RebindInProgress                  DataVolumePhase = "RebindInProgress"
)

// The condition types of a DataVolume.
const (
	// DataVolumeReady: the DataVolume can be used.
	DataVolumeReady DataVolumeConditionType = "Ready"
	// DataVolumeBound: its claim is bound.
	DataVolumeBound DataVolumeConditionType = "Bound"
	// DataVolumeRunning: the importer, cloner or upload pod is running.
	DataVolumeRunning DataVolumeConditionType = "Running"
)

// DataVolumeCloneSourceSubresource is the subresource of datavolumes on which a clone's requester
// needs `create` in the source's namespace.
const DataVolumeCloneSourceSubresource = "source"
