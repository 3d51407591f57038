package uploadproxy

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nativevirt/nativevirt/pkg/importer"
)

// ClaimGetter and PodGetter read a claim and a pod (kube-apiserver, or stubs in tests).
type (
	ClaimGetter func(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error)
	PodGetter   func(ctx context.Context, namespace, name string) (*corev1.Pod, error)
)

// KubeResolver finds upload servers through kube-apiserver.
func KubeResolver(kube kubernetes.Interface) ResolveFunc {
	return Resolver(
		func(ctx context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
			return kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		},
		func(ctx context.Context, ns, name string) (*corev1.Pod, error) {
			return kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		})
}

// Resolver finds the upload server of a claim: the pod cdi-upload-<claim> of the claim's
// DataVolume, once it is ready.
func Resolver(claims ClaimGetter, pods PodGetter) ResolveFunc {
	return func(ctx context.Context, ns, name string) (Target, error) {
		claim, err := claims(ctx, ns, name)
		if apierrors.IsNotFound(err) {
			return Target{}, errorf(http.StatusNotFound, "PVC %s/%s not found", ns, name)
		}
		if err != nil {
			return Target{}, errorf(http.StatusServiceUnavailable, "reading PVC %s/%s: %v", ns, name, err)
		}
		if _, ok := claim.Annotations[importer.AnnUploadTarget]; !ok {
			return Target{}, errorf(http.StatusBadRequest, "PVC %s/%s is not an upload target: create a DataVolume with spec.source.upload", ns, name)
		}
		switch claim.Annotations[importer.AnnPodPhase] {
		case string(corev1.PodSucceeded):
			return Target{}, errorf(http.StatusConflict, "PVC %s/%s has been uploaded already", ns, name)
		case string(corev1.PodFailed):
			return Target{}, errorf(http.StatusConflict, "the upload into PVC %s/%s failed: see its DataVolume", ns, name)
		}
		pod, err := pods(ctx, ns, importer.UploadPodPrefix+name)
		if apierrors.IsNotFound(err) {
			return Target{}, errorf(http.StatusServiceUnavailable, "the upload server of PVC %s/%s is not created yet: wait for the DataVolume's phase UploadReady", ns, name)
		}
		if err != nil {
			return Target{}, errorf(http.StatusServiceUnavailable, "reading the upload server of PVC %s/%s: %v", ns, name, err)
		}
		if ref := metav1.GetControllerOf(pod); ref == nil || ref.Kind != "DataVolume" || ref.Name != name {
			return Target{}, errorf(http.StatusBadRequest, "pod %s/%s is not the upload server of DataVolume %s", ns, pod.Name, name)
		}
		token := ""
		if len(pod.Spec.Containers) > 0 {
			for _, e := range pod.Spec.Containers[0].Env {
				if e.Name == importer.UploadTokenEnv {
					token = e.Value
				}
			}
		}
		if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" || !ready(pod) || token == "" {
			return Target{}, errorf(http.StatusServiceUnavailable, "the upload server of PVC %s/%s is not ready yet: wait for the DataVolume's phase UploadReady", ns, name)
		}
		return Target{Token: token, URL: &url.URL{Scheme: "http",
			Host: net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(importer.UploadPort))}}, nil
	}
}

func ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
