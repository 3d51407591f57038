package datavolume

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/importer"
)

// The annotations CDI keeps on the claim of an upload, which `virtctl image-upload` reads.
const (
	AnnUploadTarget = importer.AnnUploadTarget
	AnnPodPhase     = importer.AnnPodPhase
	AnnPodReady     = importer.AnnPodReady
)

// uploadAnnotations are the annotations the claim of an upload should carry, given its
// DataVolume's new phase and its upload server pod (nil: none yet).
func uploadAnnotations(phase v1beta1.DataVolumePhase, pod *corev1.Pod) map[string]string {
	ann := map[string]string{AnnUploadTarget: "", AnnPodReady: "false"}
	switch {
	case phase == v1beta1.Succeeded:
		ann[AnnPodPhase] = string(corev1.PodSucceeded)
	case pod != nil:
		ann[AnnPodPhase] = string(pod.Status.Phase)
		ann[AnnPodReady] = strconv.FormatBool(phase == v1beta1.UploadReady)
	default:
		ann[AnnPodPhase] = string(corev1.PodPending)
	}
	if phase == v1beta1.Failed {
		ann[AnnPodPhase] = string(corev1.PodFailed)
	}
	return ann
}

// annotateUpload brings the annotations of an upload's claim up to date.
func (c *Controller) annotateUpload(ctx context.Context, claim *corev1.PersistentVolumeClaim, phase v1beta1.DataVolumePhase, pod *corev1.Pod) error {
	want := uploadAnnotations(phase, pod)
	for k, v := range want {
		if have, ok := claim.Annotations[k]; !ok || have != v {
			return c.annotateClaim(ctx, claim, want)
		}
	}
	return nil
}
