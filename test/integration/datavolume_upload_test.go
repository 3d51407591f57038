package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	uploadv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/upload/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/apiserver/app"
	"github.com/nativevirt/nativevirt/pkg/controllers/datavolume"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// TestDataVolumeUploadLifecycle: an upload DataVolume on a WaitForFirstConsumer class gets its
// claim and at once an upload server pod (its first consumer); it is UploadScheduled, then
// UploadReady when the pod is ready, then Succeeded when the pod ends with a result; the claim
// carries CDI's annotations that virtctl reads. The controller creates CDIConfig config.
func TestDataVolumeUploadLifecycle(t *testing.T) {
	env := startControllers(t)
	ctx := context.Background()
	env.defaultLocalPathClass()
	env.eventually("the StorageProfile of local-path", func() (bool, error) {
		p, err := env.admin.CdiV1beta1().StorageProfiles().Get(ctx, "local-path", metav1.GetOptions{})
		return err == nil && len(p.Status.ClaimPropertySets) == 1, err
	})
	dvs := env.admin.CdiV1beta1().DataVolumes(ns)
	if _, err := dvs.Create(ctx, &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "up"},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source: &cdiv1beta1.DataVolumeSource{Upload: &cdiv1beta1.DataVolumeSourceUpload{}},
			Storage: &cdiv1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPhase := func(phase cdiv1beta1.DataVolumePhase) *cdiv1beta1.DataVolume {
		t.Helper()
		var dv *cdiv1beta1.DataVolume
		env.eventually("phase "+string(phase), func() (bool, error) {
			var err error
			if dv, err = dvs.Get(ctx, "up", metav1.GetOptions{}); err != nil {
				return false, err
			}
			return dv.Status.Phase == phase, fmt.Errorf("status %+v", dv.Status)
		})
		return dv
	}
	claimAnnotations := func(what string, want map[string]string) {
		t.Helper()
		env.eventually(what, func() (bool, error) {
			c, err := env.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "up", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for k, v := range want {
				if got, ok := c.Annotations[k]; !ok || got != v {
					return false, fmt.Errorf("annotations %v", c.Annotations)
				}
			}
			return true, nil
		})
	}
	var pod *corev1.Pod
	env.eventually("the upload server pod, without a first consumer", func() (bool, error) {
		var err error
		pod, err = env.kube.CoreV1().Pods(ns).Get(ctx, "cdi-upload-up", metav1.GetOptions{})
		return err == nil, err
	})
	c := pod.Spec.Containers[0]
	cmd := strings.Join(c.Command, " ")
	if !strings.Contains(cmd, "--serve-upload") || !strings.Contains(cmd, "--target-dir=/data") || c.ReadinessProbe == nil ||
		len(c.Env) != 1 || c.Env[0].Name != "NATIVEVIRT_UPLOAD_TOKEN" || len(c.Env[0].Value) < 32 || *c.SecurityContext.Privileged ||
		pod.Spec.Affinity != nil || !metav1.IsControlledBy(pod, mustDV(t, dvs, "up")) {
		t.Errorf("upload server pod: command %q, env %v, probe %v, affinity %v", cmd, c.Env, c.ReadinessProbe, pod.Spec.Affinity)
	}
	waitPhase(cdiv1beta1.UploadScheduled)
	claimAnnotations("the claim's upload annotations", map[string]string{datavolume.AnnUploadTarget: "", datavolume.AnnPodReady: "false"})

	setPod := func(mutate func(*corev1.Pod)) { env.setPodOnNode(ns, "cdi-upload-up", "node1", mutate) }
	setPod(func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP = "10.88.1.9"
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "importer", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	})
	waitPhase(cdiv1beta1.UploadReady)
	claimAnnotations("the claim's pod ready annotation", map[string]string{datavolume.AnnPodReady: "true", datavolume.AnnPodPhase: "Running"})

	setPod(func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodSucceeded
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "importer", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Message: `{"result":{"format":"qcow2","sourceBytes":1048576,"seconds":1}}`}}}}
	})
	dv := waitPhase(cdiv1beta1.Succeeded)
	if dv.Status.Progress != "100.0%" {
		t.Errorf("progress %q", dv.Status.Progress)
	}
	claimAnnotations("the claim's pod phase Succeeded", map[string]string{datavolume.AnnPodPhase: "Succeeded"})
	env.eventually("CDIConfig config", func() (bool, error) {
		_, err := env.admin.CdiV1beta1().CDIConfigs().Get(ctx, "config", metav1.GetOptions{})
		return err == nil, err
	})
}

func mustDV(t *testing.T, dvs interface {
	Get(context.Context, string, metav1.GetOptions) (*cdiv1beta1.DataVolume, error)
}, name string) *cdiv1beta1.DataVolume {
	t.Helper()
	dv, err := dvs.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return dv
}

// TestUploadProxyServed: with --upload-proxy-address the API server serves the upload proxy over
// HTTPS: /healthz, 401 without a token, and for a token of the server's own UploadTokenRequest
// the claim's state (here: no such claim, 404).
func TestUploadProxyServed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	srv := framework.StartWithOptions(t, "", func(o *app.Options) {
		o.UploadProxyAddress = addr
		o.KubeClient = kubefake.NewSimpleClientset()
	})
	client := srv.HTTPClient(t)
	proxy := "https://" + addr
	if r := do(t, client, http.MethodGet, proxy+"/healthz", "", nil); r.code != http.StatusOK {
		t.Errorf("/healthz: %d %s", r.code, r.body)
	}
	if r := do(t, client, http.MethodPost, proxy+"/v1beta1/upload", "application/octet-stream", []byte("x")); r.code != http.StatusUnauthorized ||
		!strings.Contains(r.body, "missing upload token") {
		t.Errorf("no token: %d %s, want 401", r.code, r.body)
	}
	tr, err := srv.Clientset(t).UploadV1beta1().UploadTokenRequests(ns).Create(context.Background(), &uploadv1beta1.UploadTokenRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "t"}, Spec: uploadv1beta1.UploadTokenRequestSpec{PvcName: "missing"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, proxy+"/v1beta1/upload-async", strings.NewReader("x"))
	req.Header.Set("Authorization", "Bearer "+tr.Status.Token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a token for a missing claim: %d, want 404", resp.StatusCode)
	}
}
