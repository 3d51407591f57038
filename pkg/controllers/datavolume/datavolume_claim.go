package datavolume

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// FilesystemOverhead is the share of a Filesystem claim kept for the filesystem itself, as
// CDI's default (0.055): a DataVolume of spec.storage asking for N bytes gets a claim of
// N / (1 - 0.055), so that an N-byte disk.img fits.
const FilesystemOverhead = 0.055

// The annotations and labels the controller puts on what it creates.
const (
	// LabelDataVolume names the DataVolume a claim or pod belongs to.
	LabelDataVolume = "cdi.kubevirt.io/dataVolume"
	// LabelApp marks importer and clone source pods.
	LabelApp = "app"
	// AppImporter is LabelApp's value on the pods of this controller.
	AppImporter = "containerized-data-importer"
	// LabelCloneTarget marks a clone source pod with the namespace.name of the DataVolume it
	// serves (possibly in another namespace, so no owner reference).
	LabelCloneTarget = "nativevirt.io/clone-target"
	// AnnSelectedNode is the node a WaitForFirstConsumer claim is provisioned on.
	AnnSelectedNode = "volume.kubernetes.io/selected-node"
	// AnnAllowClaimAdoption lets a DataVolume adopt an existing claim of its name.
	AnnAllowClaimAdoption = "cdi.kubevirt.io/allowClaimAdoption"
	// AnnPopulatedFor marks a claim adopted as already populated.
	AnnPopulatedFor = "cdi.kubevirt.io/storage.populatedFor"
	// AnnImmediateBinding asks, as CDI's annotation does, to populate a claim of a
	// WaitForFirstConsumer class without waiting for a consumer: the importer pod is the first
	// consumer, and the scheduler picks its node.
	AnnImmediateBinding = "cdi.kubevirt.io/storage.bind.immediate.requested"
	// AnnDefaultStorageClass marks the default StorageClass.
	AnnDefaultStorageClass = "storageclass.kubernetes.io/is-default-class"
)

// claimInputs is what shapes a DataVolume's claim besides its spec.
type claimInputs struct {
	// class is the claim's StorageClass (nil: none known).
	class *storagev1.StorageClass
	// profile is the class's StorageProfile (nil: none).
	profile *v1beta1.StorageProfile
	// cloneSize is the size of a clone's source claim (nil: not a clone).
	cloneSize *resource.Quantity
}

// claimPlan is the claim a DataVolume needs and the image that fills it.
type claimPlan struct {
	claim *corev1.PersistentVolumeClaim
	// imageSize is the usable size of the image in bytes on a Filesystem claim.
	imageSize int64
	// block says whether the claim is a Block volume.
	block bool
}

// planClaim renders the claim of dv: spec.pvc as given; spec.storage completed from the
// StorageProfile (access and volume modes) and grown by the filesystem overhead.
func planClaim(dv *v1beta1.DataVolume, in claimInputs) (claimPlan, error) {
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: dv.Name, Namespace: dv.Namespace,
			Labels:          map[string]string{LabelApp: AppImporter, LabelDataVolume: dv.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dv, v1beta1.SchemeGroupVersion.WithKind("DataVolume"))},
		},
	}
	if dv.Spec.PVC != nil {
		dv.Spec.PVC.DeepCopyInto(&claim.Spec)
		if claim.Spec.VolumeMode == nil {
			claim.Spec.VolumeMode = ptr(corev1.PersistentVolumeFilesystem)
		}
		size, ok := claim.Spec.Resources.Requests[corev1.ResourceStorage]
		if !ok {
			return claimPlan{}, fmt.Errorf("spec.pvc.resources.requests.storage is missing")
		}
		block := *claim.Spec.VolumeMode == corev1.PersistentVolumeBlock
		// As CDI: the image of a pvc claim leaves the overhead free.
		usable := int64(math.Floor(float64(size.Value()) * (1 - FilesystemOverhead)))
		return claimPlan{claim: claim, imageSize: alignDown(usable), block: block}, nil
	}
	s := dv.Spec.Storage
	claim.Spec = corev1.PersistentVolumeClaimSpec{
		AccessModes: append([]corev1.PersistentVolumeAccessMode(nil), s.AccessModes...),
		Selector:    s.Selector.DeepCopy(), VolumeName: s.VolumeName, StorageClassName: s.StorageClassName,
		DataSource: s.DataSource.DeepCopy(), DataSourceRef: s.DataSourceRef.DeepCopy(),
	}
	s.Resources.DeepCopyInto(&claim.Spec.Resources)
	if in.class != nil && claim.Spec.StorageClassName == nil {
		claim.Spec.StorageClassName = ptr(in.class.Name)
	}
	props := profileProperties(in.profile)
	if s.VolumeMode != nil && *s.VolumeMode != v1beta1.PersistentVolumeFromStorageProfile {
		claim.Spec.VolumeMode = ptr(*s.VolumeMode)
	} else if props != nil && props.VolumeMode != nil {
		claim.Spec.VolumeMode = ptr(*props.VolumeMode)
	} else {
		claim.Spec.VolumeMode = ptr(corev1.PersistentVolumeFilesystem)
	}
	if len(claim.Spec.AccessModes) == 0 {
		if props == nil || len(props.AccessModes) == 0 {
			return claimPlan{}, fmt.Errorf("DataVolume.storage spec is missing accessMode and no storageClass to choose profile")
		}
		claim.Spec.AccessModes = append(claim.Spec.AccessModes, props.AccessModes...)
	}
	requested, ok := s.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		if in.cloneSize == nil {
			return claimPlan{}, fmt.Errorf("spec.storage.resources.requests.storage is missing")
		}
		requested = in.cloneSize.DeepCopy()
	}
	block := *claim.Spec.VolumeMode == corev1.PersistentVolumeBlock
	size := requested.Value()
	if !block {
		size = inflate(size)
	}
	if claim.Spec.Resources.Requests == nil {
		claim.Spec.Resources.Requests = corev1.ResourceList{}
	}
	claim.Spec.Resources.Requests[corev1.ResourceStorage] = *resource.NewQuantity(size, resource.BinarySI)
	return claimPlan{claim: claim, imageSize: alignDown(requested.Value()), block: block}, nil
}

// inflate grows a requested size by the filesystem overhead, rounded up to a MiB.
func inflate(size int64) int64 {
	grown := int64(math.Ceil(float64(size) / (1 - FilesystemOverhead)))
	const mib = 1 << 20
	return (grown + mib - 1) / mib * mib
}

// alignDown rounds a size down to whole 512-byte sectors (QEMU wants disks in sectors).
func alignDown(n int64) int64 { return n / 512 * 512 }

// profileProperties returns the first claim property set of a StorageProfile: the status (as
// computed from the class), or the spec an administrator set.
func profileProperties(p *v1beta1.StorageProfile) *v1beta1.ClaimPropertySet {
	if p == nil {
		return nil
	}
	if len(p.Spec.ClaimPropertySets) > 0 {
		return &p.Spec.ClaimPropertySets[0]
	}
	if len(p.Status.ClaimPropertySets) > 0 {
		return &p.Status.ClaimPropertySets[0]
	}
	return nil
}

// defaultClass picks the default StorageClass (the newest of several, as Kubernetes does).
func defaultClass(classes []*storagev1.StorageClass) *storagev1.StorageClass {
	var best *storagev1.StorageClass
	for _, c := range classes {
		if c.Annotations[AnnDefaultStorageClass] != "true" {
			continue
		}
		if best == nil || c.CreationTimestamp.After(best.CreationTimestamp.Time) {
			best = c
		}
	}
	return best
}

// waitsForConsumer says whether claims of the class bind only once a pod uses them.
func waitsForConsumer(class *storagev1.StorageClass) bool {
	return class != nil && class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}

func ptr[T any](v T) *T { return &v }
