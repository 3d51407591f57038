package datavolume

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// TestImporterPodHTTPSecrets: an http source's secretRef (basic auth), certConfigMap (trusted
// certificates), extraHeaders and secretExtraHeaders reach the importer as read-only mounts and
// flags; the pod stays unprivileged, without an API token.
func TestImporterPodHTTPSecrets(t *testing.T) {
	src := &v1beta1.DataVolumeSourceHTTP{URL: "https://images.example/f.qcow2", SecretRef: "creds", CertConfigMap: "ca",
		ExtraHeaders: []string{"X-A: 1"}, SecretExtraHeaders: []string{"hdrs"}}
	dv := &v1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "f", Namespace: "ns", UID: "u"},
		Spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{HTTP: src}}}
	plan := claimPlan{claim: &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "f", Namespace: "ns"}}, imageSize: 1 << 30}
	pod := importerPod(dv, plan, population{http: src}, Config{Image: "launcher"}, "")

	c := pod.Spec.Containers[0]
	args := strings.Join(c.Command, " ")
	for _, want := range []string{"--url=https://images.example/f.qcow2", "--header=X-A: 1", "--secret-dir=" + secretDir,
		"--cert-dir=" + certDir, "--header-dir=" + headerDir} {
		if !strings.Contains(args, want) {
			t.Errorf("command %q lacks %q", args, want)
		}
	}
	sources := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Secret != nil:
			sources[v.Name] = "secret/" + v.Secret.SecretName
		case v.ConfigMap != nil:
			sources[v.Name] = "configmap/" + v.ConfigMap.Name
		}
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		if _, ok := sources[m.Name]; ok {
			if !m.ReadOnly {
				t.Errorf("mount %s is writable", m.Name)
			}
			mounts[sources[m.Name]] = m.MountPath
		}
	}
	for src, path := range map[string]string{"secret/creds": secretDir, "configmap/ca": certDir, "secret/hdrs": headerDir + "/header-0"} {
		if mounts[src] != path {
			t.Errorf("%s mounted at %q, want %q (mounts %v)", src, mounts[src], path, mounts)
		}
	}
	if sc := c.SecurityContext; sc == nil || sc.Privileged == nil || *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("security context %+v, want unprivileged", sc)
	}
	if a := pod.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Error("the importer pod mounts a service account token")
	}
}
