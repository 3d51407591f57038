package launcherpod

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// ClaimsDir is where filesystem-mode claims are mounted in the compute container, one directory
// per volume holding the disk image (disk.img); block-mode claims appear as /dev/<volume>. The
// node's domain converter points the guest at the same places (convert.DefaultPVCDir).
const ClaimsDir = "/var/run/nativevirt-pvcs"

// SharedVolumesAnnotation on a launcher pod lists (comma-separated) the claim volumes that other
// nodes can attach at the same time (ReadWriteMany): the node agent keeps them in place during a
// live migration instead of copying them, so they do not stop the guest from migrating.
const SharedVolumesAnnotation = "nativevirt.io/shared-volumes"

// ClaimLookup returns the PersistentVolumeClaim namespace/name, or an error that satisfies
// apierrors.IsNotFound when there is none.
type ClaimLookup func(namespace, name string) (*corev1.PersistentVolumeClaim, error)

// DataVolumeDiskImage is the file a DataVolume's importer writes on a filesystem-mode claim.
const DataVolumeDiskImage = "disk.img"

// ErrClaimPending (wrapped) is returned by Render when a claim the instance uses does not exist
// yet: the pod is built once it does.
var ErrClaimPending = errors.New("persistent volume claim pending")

// claimVolume is one VMI volume backed by a claim.
type claimVolume struct {
	volume, claim string
	readOnly      bool
	// ephemeral: the claim is the read-only base of a local overlay, which does not move.
	ephemeral bool
	// dataVolume: the claim of a DataVolume, which its importer fills.
	dataVolume bool
}

// claimVolumes lists the instance's volumes backed by a claim: persistentVolumeClaim, the claim
// of a dataVolume (named as the DataVolume, as CDI names it), and the read-only base of an
// ephemeral volume.
func claimVolumes(vmi *kubevirtv1.VirtualMachineInstance) []claimVolume {
	var out []claimVolume
	for _, v := range vmi.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, claimVolume{volume: v.Name, claim: v.PersistentVolumeClaim.ClaimName, readOnly: v.PersistentVolumeClaim.ReadOnly})
		case v.DataVolume != nil:
			out = append(out, claimVolume{volume: v.Name, claim: v.DataVolume.Name, dataVolume: true})
		case v.Ephemeral != nil && v.Ephemeral.PersistentVolumeClaim != nil:
			out = append(out, claimVolume{volume: v.Name, claim: v.Ephemeral.PersistentVolumeClaim.ClaimName, readOnly: true, ephemeral: true})
		}
	}
	return out
}

// IsBlock reports whether a claim is a raw block device.
func IsBlock(pvc *corev1.PersistentVolumeClaim) bool {
	return pvc.Spec.VolumeMode != nil && *pvc.Spec.VolumeMode == corev1.PersistentVolumeBlock
}

// addClaims gives the pod a volume per claim and mounts it into the compute container: a
// directory under ClaimsDir (filesystem mode) or the device /dev/<volume> (block mode).
func addClaims(pod *corev1.Pod, vmi *kubevirtv1.VirtualMachineInstance, lookup ClaimLookup) error {
	claims := claimVolumes(vmi)
	if len(claims) == 0 {
		return nil
	}
	if lookup == nil {
		return errors.New("persistent volume claims are not available to this controller")
	}
	compute := &pod.Spec.Containers[0]
	var shared []string
	for _, c := range claims {
		if err := checkNotReserved(c.volume); err != nil {
			return err
		}
		pvc, err := lookup(vmi.Namespace, c.claim)
		if err != nil {
			return fmt.Errorf("volume %s: claim %s: %w: %w", c.volume, c.claim, ErrClaimPending, err)
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
			Name: c.volume,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: c.claim, ReadOnly: c.readOnly,
			}},
		})
		if !c.ephemeral && IsShared(pvc) {
			shared = append(shared, c.volume)
		}
		if IsBlock(pvc) {
			compute.VolumeDevices = append(compute.VolumeDevices, corev1.VolumeDevice{Name: c.volume, DevicePath: path.Join("/dev", c.volume)})
			continue
		}
		compute.VolumeMounts = append(compute.VolumeMounts, corev1.VolumeMount{
			Name: c.volume, MountPath: path.Join(ClaimsDir, c.volume), ReadOnly: c.readOnly,
		})
		if c.dataVolume {
			// The DataVolume's importer writes disk.img (renamed into place once complete): the
			// launcher waits for it. This pod may be the claim's first consumer
			// (WaitForFirstConsumer), which lets the claim be populated on its node.
			compute.Command = append(compute.Command, "--await-file", path.Join(ClaimsDir, c.volume, DataVolumeDiskImage))
			continue
		}
		// A fresh writable claim gets its disk image from the launcher, sized to the claim.
		if size := claimCapacity(pvc); !c.readOnly && size > 0 {
			compute.Command = append(compute.Command, "--claim-disk", c.volume+"="+strconv.FormatInt(size, 10))
		}
	}
	if len(shared) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[SharedVolumesAnnotation] = strings.Join(shared, ",")
	}
	return nil
}

// IsShared reports whether a claim can be attached on several nodes at once (ReadWriteMany).
func IsShared(pvc *corev1.PersistentVolumeClaim) bool {
	for _, m := range pvc.Spec.AccessModes {
		if m == corev1.ReadWriteMany {
			return true
		}
	}
	return false
}

// BlockVolumes names the volumes a launcher pod attaches as raw block devices (block-mode claims).
func BlockVolumes(pod *corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, c := range pod.Spec.Containers {
		for _, d := range c.VolumeDevices {
			out[d.Name] = true
		}
	}
	return out
}

// SharedVolumes reads SharedVolumesAnnotation of a launcher pod.
func SharedVolumes(pod *corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, v := range strings.Split(pod.Annotations[SharedVolumesAnnotation], ",") {
		if v != "" {
			out[v] = true
		}
	}
	return out
}

// claimCapacity is the bound volume's capacity, else the requested storage, in bytes (0 when
// neither is known).
func claimCapacity(pvc *corev1.PersistentVolumeClaim) int64 {
	if q, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok {
		return q.Value()
	}
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		return q.Value()
	}
	return 0
}
