package datavolume

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// TestImporterPodRegistry: pullMethod pod (or unset) runs the importer alone, pulling with the
// source's Secret and ConfigMap mounted; pullMethod node copies the disk out of the image in
// init containers.
func TestImporterPodRegistry(t *testing.T) {
	dv := &v1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", UID: "u"}}
	plan := claimPlan{claim: &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, imageSize: 1 << 30}
	url := "docker://10.88.0.1:5000/demo:latest"
	cfg := Config{Image: "launcher"}

	pod := importerPod(dv, plan, population{registry: &v1beta1.DataVolumeSourceRegistry{URL: &url,
		SecretRef: ptr("creds"), CertConfigMap: ptr("ca")}, insecureRegistry: true}, cfg, "")
	if len(pod.Spec.InitContainers) != 0 {
		t.Errorf("pullMethod pod: init containers %v, want none", pod.Spec.InitContainers)
	}
	cmd := pod.Spec.Containers[0].Command
	for _, want := range []string{"--registry=" + url, "--insecure-registry", "--secret-dir=" + secretDir, "--cert-dir=" + certDir, "--target-dir=" + targetDir} {
		if !slices.Contains(cmd, want) {
			t.Errorf("command %q lacks %q", cmd, want)
		}
	}
	volumes := map[string]corev1.VolumeSource{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v.VolumeSource
	}
	if s := volumes["secret"].Secret; s == nil || s.SecretName != "creds" {
		t.Errorf("secret volume %+v, want the Secret creds", volumes["secret"])
	}
	if c := volumes["certs"].ConfigMap; c == nil || c.Name != "ca" {
		t.Errorf("certs volume %+v, want the ConfigMap ca", volumes["certs"])
	}

	// Without credentials nor an insecure registry: none of their flags.
	pod = importerPod(dv, plan, population{registry: &v1beta1.DataVolumeSourceRegistry{URL: &url}}, cfg, "")
	for _, arg := range pod.Spec.Containers[0].Command {
		if arg == "--insecure-registry" || arg == "--secret-dir="+secretDir || arg == "--cert-dir="+certDir {
			t.Errorf("unexpected %q in %q", arg, pod.Spec.Containers[0].Command)
		}
	}

	pod = importerPod(dv, plan, population{registryImage: "localhost/demo:dev"}, cfg, "")
	if len(pod.Spec.InitContainers) != 2 || pod.Spec.InitContainers[1].Image != "localhost/demo:dev" {
		t.Errorf("pullMethod node: init containers %v, want the copier and the image", pod.Spec.InitContainers)
	}
}
