package launcherpod

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// The attachment pod of a hotplugged volume (KubeVirt's hp-volume-* pod): an unprivileged pod
// of the instance's namespace, on the instance's node, that only mounts the claim. It is the
// claim's consumer (a WaitForFirstConsumer claim is provisioned on that node) and proves that
// the instance's owner may use the claim as any pod may. The node agent opens the disk image
// in it and hands QEMU the descriptor; the launcher pod is never changed.
const (
	// HotplugLabelValue is the value of the kubevirt.io label on attachment pods.
	HotplugLabelValue = "hotplug-disk"
	// HotplugForLabel on an attachment pod is the UID of its instance.
	HotplugForLabel = "nativevirt.io/hotplug-for"
	// HotplugVolumeLabel on an attachment pod names the volume it attaches.
	HotplugVolumeLabel = "nativevirt.io/hotplug-volume"
	// HotplugSizeAnnotation on an attachment pod is the claim's size in bytes: the size of the
	// disk image the node agent creates in a filesystem claim without one.
	HotplugSizeAnnotation = "nativevirt.io/hotplug-disk-size"
	// HotplugBlockAnnotation on an attachment pod is "true" when the claim is a block device.
	HotplugBlockAnnotation = "nativevirt.io/hotplug-block"
	// HotplugMountDir is where the attachment container mounts a filesystem claim
	// (<dir>/<volume>/disk.img); a block claim is the device HotplugDevice(volume).
	HotplugMountDir = "/hotplug"
	// hotplugContainer is the attachment pod's only container.
	hotplugContainer = "hotplug-disk"
)

// HotplugSelector selects attachment pods.
var HotplugSelector = labels.SelectorFromSet(labels.Set{kubevirtv1.AppLabel: HotplugLabelValue}).String()

// HotplugDevice is the path of a block claim's device in the attachment container.
func HotplugDevice(volume string) string { return path.Join("/dev", "hotplug-"+volume) }

// HotplugImage is the path of a filesystem claim's disk image in the attachment container.
func HotplugImage(volume string) string { return path.Join(HotplugMountDir, volume, "disk.img") }

// HotplugVolumes are the instance's hotpluggable volumes that its launcher pod does not mount:
// those plugged in after it started, which need an attachment pod. Hotpluggable volumes the
// instance had from its start are claims of the launcher pod. A nil pod gives none.
func HotplugVolumes(vmi *kubevirtv1.VirtualMachineInstance, launcher *corev1.Pod) []kubevirtv1.Volume {
	if launcher == nil {
		return nil
	}
	inPod := map[string]bool{}
	for _, v := range launcher.Spec.Volumes {
		inPod[v.Name] = true
	}
	var out []kubevirtv1.Volume
	for _, v := range vmi.Spec.Volumes {
		if kubevirtv1.IsHotpluggableVolume(&v) && !inPod[v.Name] {
			out = append(out, v)
		}
	}
	return out
}

// AttachmentPodName is the name of the attachment pod of the instance's volume.
func AttachmentPodName(vmi *kubevirtv1.VirtualMachineInstance, volume string) string {
	name := "hp-volume-" + vmi.Name + "-" + volume
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(vmi.Name + "/" + volume))
	return name[:50] + "-" + hex.EncodeToString(sum[:6])
}

// HotplugClaim is the claim of a hotplugged volume (a persistentVolumeClaim, or a dataVolume
// whose claim CDI names as the DataVolume) and whether the volume is read-only; "" for other
// volumes.
func HotplugClaim(vol *kubevirtv1.Volume) (claim string, readOnly bool) {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return vol.PersistentVolumeClaim.ClaimName, vol.PersistentVolumeClaim.ReadOnly
	case vol.DataVolume != nil:
		return vol.DataVolume.Name, false
	}
	return "", false
}

// RenderAttachmentPod builds the attachment pod of the volume (a persistentVolumeClaim or a
// dataVolume) of the instance running on node. The pod of a DataVolume may be its claim's first
// consumer (WaitForFirstConsumer); the node agent plugs the disk in once the import has put the
// image in place.
func RenderAttachmentPod(vmi *kubevirtv1.VirtualMachineInstance, vol *kubevirtv1.Volume, node string, cfg Config) (*corev1.Pod, error) {
	claimName, readOnly := HotplugClaim(vol)
	if claimName == "" {
		return nil, fmt.Errorf("volume %s: only claims and DataVolumes are hotplugged", vol.Name)
	}
	if cfg.Claims == nil {
		return nil, fmt.Errorf("persistent volume claims are not available to this controller")
	}
	pvc, err := cfg.Claims(vmi.Namespace, claimName)
	if err != nil {
		return nil, fmt.Errorf("volume %s: claim %s: %w: %w", vol.Name, claimName, ErrClaimPending, err)
	}
	container := corev1.Container{
		Name:            hotplugContainer,
		Image:           cfg.launcherImage(),
		ImagePullPolicy: cfg.launcherPullPolicy(),
		Command:         []string{"sleep", "2147483647"},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			RunAsUser:                ptr.To[int64](65534),
			RunAsNonRoot:             ptr.To(true),
		},
	}
	block := IsBlock(pvc)
	if block {
		container.VolumeDevices = []corev1.VolumeDevice{{Name: vol.Name, DevicePath: HotplugDevice(vol.Name)}}
	} else {
		container.VolumeMounts = []corev1.VolumeMount{{Name: vol.Name, MountPath: path.Join(HotplugMountDir, vol.Name), ReadOnly: readOnly}}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      AttachmentPodName(vmi, vol.Name),
			Namespace: vmi.Namespace,
			Labels: map[string]string{kubevirtv1.AppLabel: HotplugLabelValue, HotplugForLabel: string(vmi.UID),
				HotplugVolumeLabel: vol.Name},
			Annotations: map[string]string{
				HotplugSizeAnnotation:  strconv.FormatInt(claimCapacity(pvc), 10),
				HotplugBlockAnnotation: strconv.FormatBool(block),
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))},
		},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{container},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			AutomountServiceAccountToken:  ptr.To(false),
			Tolerations:                   vmi.Spec.Tolerations,
			// Through the scheduler (not nodeName), so that a WaitForFirstConsumer claim is
			// provisioned on the instance's node.
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
				}}},
			}},
			Volumes: []corev1.Volume{{Name: vol.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName, ReadOnly: readOnly},
			}}},
		},
	}
	return pod, nil
}
