package uploadproxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nativevirt/nativevirt/pkg/importer"
	"github.com/nativevirt/nativevirt/pkg/uploadtoken"
)

func key(t *testing.T) uploadtoken.Key {
	t.Helper()
	k, err := uploadtoken.KeyFromBytes([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestProxy: the proxy answers /healthz, refuses what is not an upload or carries no valid token
// for a ready claim, and streams an upload to the claim's upload server with that server's
// secret instead of the client's token.
func TestProxy(t *testing.T) {
	k := key(t)
	now := time.Unix(1_800_000_000, 0)
	var got struct {
		path, auth, body, method string
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.path, got.auth, got.body, got.method = r.URL.Path, r.Header.Get("Authorization"), string(b), r.Method
		_, _ = io.WriteString(w, "upload complete")
	}))
	defer backend.Close()
	burl, _ := url.Parse(backend.URL)
	p := &Proxy{Key: k, Now: func() time.Time { return now }, Resolve: func(_ context.Context, ns, name string) (Target, error) {
		switch name {
		case "ready":
			return Target{URL: burl, Token: "server-secret"}, nil
		case "notready":
			return Target{}, errorf(http.StatusServiceUnavailable, "the upload server of PVC %s/%s is not ready yet", ns, name)
		}
		return Target{}, errorf(http.StatusNotFound, "PVC %s/%s not found", ns, name)
	}}
	token := func(name string, at time.Time) string {
		tok, err := k.Issue("default", name, at)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	other, _ := uploadtoken.KeyFromBytes([]byte(strings.Repeat("o", 32)))
	forged, _ := other.Issue("default", "ready", now)
	for _, tc := range []struct {
		name, method, path, auth string
		status                   int
		contains                 string
	}{
		{name: "healthz", method: http.MethodGet, path: "/healthz", status: 200},
		{name: "unknown path", method: http.MethodPost, path: "/upload", status: 404, contains: "not an upload path"},
		{name: "GET", method: http.MethodGet, path: "/v1beta1/upload", auth: "Bearer " + token("ready", now), status: 405},
		{name: "CORS preflight", method: http.MethodOptions, path: "/v1beta1/upload-form-async", status: 200},
		{name: "no token", method: http.MethodPost, path: "/v1beta1/upload", status: 401, contains: "missing upload token"},
		{name: "basic auth", method: http.MethodPost, path: "/v1beta1/upload", auth: "Basic eDp5", status: 401, contains: "missing upload token"},
		{name: "garbage", method: http.MethodPost, path: "/v1beta1/upload", auth: "Bearer abc", status: 401, contains: "malformed"},
		{name: "other key", method: http.MethodPost, path: "/v1beta1/upload", auth: "Bearer " + forged, status: 401, contains: "invalid signature"},
		{name: "expired", method: http.MethodPost, path: "/v1beta1/upload", auth: "Bearer " + token("ready", now.Add(-6*time.Minute)), status: 401, contains: "expired"},
		{name: "missing claim", method: http.MethodPost, path: "/v1beta1/upload", auth: "Bearer " + token("gone", now), status: 404, contains: "PVC default/gone not found"},
		{name: "not ready", method: http.MethodHead, path: "/v1beta1/upload-async", auth: "Bearer " + token("notready", now), status: 503},
		{name: "HEAD async", method: http.MethodHead, path: "/v1beta1/upload-async", auth: "Bearer " + token("ready", now), status: 200},
		{name: "upload", method: http.MethodPost, path: "/v1alpha1/upload", auth: "Bearer " + token("ready", now), status: 200, contains: "upload complete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader("IMAGE"))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			p.ServeHTTP(rec, req)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.contains) {
				t.Errorf("%s %s: %d %q, want %d containing %q", tc.method, tc.path, rec.Code, rec.Body.String(), tc.status, tc.contains)
			}
		})
	}
	if got.path != "/v1alpha1/upload" || got.auth != "Bearer server-secret" || got.body != "IMAGE" || got.method != http.MethodPost {
		t.Errorf("the upload server got %+v, want POST /v1alpha1/upload with its secret and the body", got)
	}
}

// TestResolver: the upload server of a claim is its DataVolume's ready cdi-upload pod.
func TestResolver(t *testing.T) {
	dvRef := []metav1.OwnerReference{{Kind: "DataVolume", Name: "disk", Controller: ptr(true)}}
	readyPod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "cdi-upload-disk", Namespace: "ns", OwnerReferences: dvRef},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Env: []corev1.EnvVar{{Name: importer.UploadTokenEnv, Value: "s3cret"}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.88.1.5",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	unready := readyPod.DeepCopy()
	unready.Status.Conditions[0].Status = corev1.ConditionFalse
	foreign := readyPod.DeepCopy()
	foreign.OwnerReferences = nil
	claim := func(ann map[string]string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "disk", Namespace: "ns", Annotations: ann}}
	}
	upload := map[string]string{importer.AnnUploadTarget: "", importer.AnnPodPhase: "Running"}
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "x"}, "disk")
	for _, tc := range []struct {
		name   string
		claim  *corev1.PersistentVolumeClaim
		pod    *corev1.Pod
		status int
		url    string
	}{
		{name: "ready", claim: claim(upload), pod: readyPod, url: "http://10.88.1.5:8443"},
		{name: "no claim", status: 404},
		{name: "not an upload", claim: claim(nil), pod: readyPod, status: 400},
		{name: "uploaded", claim: claim(map[string]string{importer.AnnUploadTarget: "", importer.AnnPodPhase: "Succeeded"}), status: 409},
		{name: "no pod", claim: claim(upload), status: 503},
		{name: "pod not ready", claim: claim(upload), pod: unready, status: 503},
		{name: "someone else's pod", claim: claim(upload), pod: foreign, status: 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Resolver(func(context.Context, string, string) (*corev1.PersistentVolumeClaim, error) {
				if tc.claim == nil {
					return nil, notFound
				}
				return tc.claim, nil
			}, func(context.Context, string, string) (*corev1.Pod, error) {
				if tc.pod == nil {
					return nil, notFound
				}
				return tc.pod, nil
			})
			target, err := r(context.Background(), "ns", "disk")
			if tc.status == 0 {
				if err != nil || target.URL.String() != tc.url || target.Token != "s3cret" {
					t.Errorf("target %v %q, %v; want %s", target.URL, target.Token, err, tc.url)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok || e.Status != tc.status {
				t.Errorf("error %v, want status %d", err, tc.status)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
