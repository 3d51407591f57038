package launcherpod

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// A hotplugged DataVolume gets an attachment pod mounting its claim (named as the DataVolume),
// once the claim exists.
func TestRenderAttachmentPodOfDataVolume(t *testing.T) {
	hot := kubevirtv1.Volume{Name: "hot", VolumeSource: kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "hot-dv", Hotpluggable: true}}}
	vmi := claimVMI(hot)
	launcher := &corev1.Pod{}
	if got := HotplugVolumes(vmi, launcher); len(got) != 1 || got[0].Name != "hot" {
		t.Fatalf("hotplug volumes %+v, want hot", got)
	}
	if _, err := RenderAttachmentPod(vmi, &hot, "node1", Config{Claims: claims()}); !errors.Is(err, ErrClaimPending) {
		t.Fatalf("without the claim: %v, want ErrClaimPending", err)
	}
	pod, err := RenderAttachmentPod(vmi, &hot, "node1", Config{Claims: claims(pvc("hot-dv", corev1.PersistentVolumeFilesystem))})
	if err != nil {
		t.Fatal(err)
	}
	if v := pod.Spec.Volumes; len(v) != 1 || v[0].PersistentVolumeClaim == nil || v[0].PersistentVolumeClaim.ClaimName != "hot-dv" {
		t.Errorf("attachment pod volumes %+v, want claim hot-dv", v)
	}
	if m := pod.Spec.Containers[0].VolumeMounts; len(m) != 1 || m[0].MountPath != "/hotplug/hot" {
		t.Errorf("mounts %+v, want /hotplug/hot", m)
	}
	// Mounted by the launcher from its start: no attachment pod.
	if got := HotplugVolumes(vmi, &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "hot"}}}}); len(got) != 0 {
		t.Errorf("hotplug volumes of a launcher with the volume: %+v", got)
	}
}
