package launcherpod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// TestRenderConfigVolumes: each config volume is a pod volume of its name mounted read-only into
// the compute container, whose launcher builds its disk with the volume's label (cfgdata by
// default); a serviceAccount volume makes the pod run as that account with its token projected.
func TestRenderConfigVolumes(t *testing.T) {
	vmi := testVMI()
	vmi.Spec.Volumes = append(vmi.Spec.Volumes,
		kubevirtv1.Volume{Name: "app-config", VolumeSource: kubevirtv1.VolumeSource{ConfigMap: &kubevirtv1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, VolumeLabel: "APPCFG"}}},
		kubevirtv1.Volume{Name: "creds", VolumeSource: kubevirtv1.VolumeSource{Secret: &kubevirtv1.SecretVolumeSource{SecretName: "db"}}},
		kubevirtv1.Volume{Name: "labels", VolumeSource: kubevirtv1.VolumeSource{DownwardAPI: &kubevirtv1.DownwardAPIVolumeSource{
			Fields: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
		kubevirtv1.Volume{Name: "sa", VolumeSource: kubevirtv1.VolumeSource{ServiceAccount: &kubevirtv1.ServiceAccountVolumeSource{ServiceAccountName: "builder"}}},
		kubevirtv1.Volume{Name: "sysprep", VolumeSource: kubevirtv1.VolumeSource{Sysprep: &kubevirtv1.SysprepSource{
			ConfigMap: &corev1.LocalObjectReference{Name: "win-unattend"}}}},
		// An ACPI table's secret: mounted for QEMU, no disk.
		kubevirtv1.Volume{Name: "slic", VolumeSource: kubevirtv1.VolumeSource{Secret: &kubevirtv1.SecretVolumeSource{SecretName: "slic"}}},
	)
	vmi.Spec.Domain.Firmware = &kubevirtv1.Firmware{ACPI: &kubevirtv1.ACPI{SlicNameRef: "slic"}}
	pod, err := Render(vmi, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.ServiceAccountName != "builder" {
		t.Errorf("serviceAccountName %q, want builder", pod.Spec.ServiceAccountName)
	}
	if got := flagValues(pod.Spec.Containers[0].Command, "--config-disk"); !cmp.Equal(got,
		[]string{"app-config=APPCFG", "creds=cfgdata", "labels=cfgdata", "sa=cfgdata", "sysprep=unattendCD"}) {
		t.Errorf("--config-disk %v", got)
	}
	volumes := map[string]corev1.VolumeSource{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v.VolumeSource
	}
	if cm := volumes["app-config"].ConfigMap; cm == nil || cm.Name != "app" {
		t.Errorf("app-config volume %+v, want config map app", volumes["app-config"])
	}
	if cm := volumes["sysprep"].ConfigMap; cm == nil || cm.Name != "win-unattend" {
		t.Errorf("sysprep volume %+v, want config map win-unattend", volumes["sysprep"])
	}
	if s := volumes["slic"].Secret; s == nil || s.SecretName != "slic" {
		t.Errorf("slic volume %+v, want secret slic (the ACPI table's, mounted though it has no disk)", volumes["slic"])
	}
	if s := volumes["creds"].Secret; s == nil || s.SecretName != "db" {
		t.Errorf("creds volume %+v, want secret db", volumes["creds"])
	}
	if d := volumes["labels"].DownwardAPI; d == nil || len(d.Items) != 1 || d.Items[0].FieldRef.FieldPath != "metadata.labels" {
		t.Errorf("labels volume %+v, want the downward API's labels", volumes["labels"])
	}
	var projected []string
	if p := volumes["sa"].Projected; p != nil {
		for _, s := range p.Sources {
			switch {
			case s.ServiceAccountToken != nil:
				projected = append(projected, s.ServiceAccountToken.Path)
			case s.ConfigMap != nil:
				projected = append(projected, s.ConfigMap.Items[0].Path)
			case s.DownwardAPI != nil:
				projected = append(projected, s.DownwardAPI.Items[0].Path)
			}
		}
	}
	if !cmp.Equal(projected, []string{"token", "ca.crt", "namespace"}) {
		t.Errorf("sa volume projects %v, want token, ca.crt and namespace", projected)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		mounts[m.Name] = m
	}
	for _, name := range []string{"app-config", "creds", "labels", "sa"} {
		if m, ok := mounts[name]; !ok || !m.ReadOnly || m.MountPath != ConfigVolumesDir+"/"+name {
			t.Errorf("mount of %s: %+v, want read-only at %s/%s", name, m, ConfigVolumesDir, name)
		}
	}

	// A volume may not take the name of one of the pod's own.
	vmi.Spec.Volumes = append(vmi.Spec.Volumes, kubevirtv1.Volume{Name: DisksVolume,
		VolumeSource: kubevirtv1.VolumeSource{Secret: &kubevirtv1.SecretVolumeSource{SecretName: "x"}}})
	if _, err := Render(vmi, Config{}); err == nil || !strings.Contains(err.Error(), `"disks" is reserved`) {
		t.Errorf("a volume named disks: %v, want refused", err)
	}
}
