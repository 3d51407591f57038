package integration

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// TestDataVolumeRegistryPod: a registry DataVolume without pullMethod (CDI's default, pod) gets
// an importer pod that pulls the image itself: --registry, the secretRef mounted, and
// --insecure-registry only for a registry the CDIConfig lists in spec.insecureRegistries.
func TestDataVolumeRegistryPod(t *testing.T) {
	env := startControllers(t)
	ctx := context.Background()
	configs := env.admin.CdiV1beta1().CDIConfigs()
	if _, err := configs.Create(ctx, &cdiv1beta1.CDIConfig{ObjectMeta: metav1.ObjectMeta{Name: cdiv1beta1.CDIConfigName}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := configs.Patch(ctx, cdiv1beta1.CDIConfigName, types.MergePatchType,
		[]byte(`{"spec":{"insecureRegistries":["10.0.0.5:5000"]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	dvs := env.admin.CdiV1beta1().DataVolumes(ns)
	for name, url := range map[string]string{"insecure": "docker://10.0.0.5:5000/demo:latest", "secure": "docker://registry.example/demo:latest"} {
		if _, err := dvs.Create(ctx, &cdiv1beta1.DataVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: cdiv1beta1.DataVolumeSpec{
				Source: &cdiv1beta1.DataVolumeSource{Registry: &cdiv1beta1.DataVolumeSourceRegistry{URL: &url, SecretRef: ptr("creds")}},
				PVC: &corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
			},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	for name, insecure := range map[string]bool{"insecure": true, "secure": false} {
		var pod *corev1.Pod
		env.eventually("the importer pod of "+name, func() (bool, error) {
			var err error
			pod, err = env.kube.CoreV1().Pods(ns).Get(ctx, "importer-"+name, metav1.GetOptions{})
			return err == nil, err
		})
		cmd := pod.Spec.Containers[0].Command
		dv, err := dvs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(cmd, "--registry="+*dv.Spec.Source.Registry.URL) || slices.Contains(cmd, "--insecure-registry") != insecure ||
			len(pod.Spec.InitContainers) != 0 {
			t.Errorf("%s: command %q, init containers %d; want --registry, --insecure-registry %v, no init containers", name, cmd, len(pod.Spec.InitContainers), insecure)
		}
		mounted := false
		for _, v := range pod.Spec.Volumes {
			mounted = mounted || (v.Secret != nil && v.Secret.SecretName == "creds")
		}
		if !mounted {
			t.Errorf("%s: the secretRef is not mounted: %+v", name, pod.Spec.Volumes)
		}
	}
}
