package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ulikunitz/xz"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	uploadv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/upload/v1beta1"
)

// TestDataVolumeUpload uploads the demo guest disk from the host through the upload proxy's
// NodePort (the URL published in CDIConfig config's status.uploadProxyURL):
//   - as qcow2, with exactly the requests upstream `virtctl image-upload` makes (create a
//     DataVolume with source.upload, wait for UploadReady, UploadTokenRequest, HEAD then POST
//     /v1beta1/upload-async with the Bearer token), after the proxy refused a request without a
//     token and one with a forged token; a second upload into the same claim is refused;
//   - as raw.xz with `nativevirt image-upload dv … --insecure`; a consumer pod reads the demo
//     disk's checksum from the claim;
//   - a text file, which fails the DataVolume with a message saying it is not a disk image.
//
// The demo VM then boots from the uploaded qcow2 to its shell prompt.
func TestDataVolumeUpload(t *testing.T) {
	e := newCtrlEnv(t, "e2e-upload")
	ctx := context.Background()
	disk, raw, want := e.demoDisk()
	qcow, rawXZ, text := uploadFiles(t, disk, raw)

	dvs := e.kv.CdiV1beta1().DataVolumes(e.ns)
	createUploadDV := func(name string) {
		t.Helper()
		if _, err := dvs.Create(ctx, &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cdiv1beta1.DataVolumeSpec{
			Source: &cdiv1beta1.DataVolumeSource{Upload: &cdiv1beta1.DataVolumeSourceUpload{}},
			Storage: &cdiv1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(dvSize)}}},
		}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create DataVolume %s: %v", name, err)
		}
	}
	var proxy string
	e.wait("CDIConfig config status.uploadProxyURL", func() (bool, error) {
		cfg, err := e.kv.CdiV1beta1().CDIConfigs().Get(ctx, "config", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if cfg.Status.UploadProxyURL != nil {
			proxy = *cfg.Status.UploadProxyURL
		}
		return proxy != "", fmt.Errorf("status %+v", cfg.Status)
	})
	t.Logf("upload proxy: %s", proxy)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // virtctl --insecure
	token := func(claim string) string {
		t.Helper()
		tr, err := e.kv.UploadV1beta1().UploadTokenRequests(e.ns).Create(ctx, &uploadv1beta1.UploadTokenRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "token-for-virtctl"}, Spec: uploadv1beta1.UploadTokenRequestSpec{PvcName: claim}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("UploadTokenRequest: %v", err)
		}
		return tr.Status.Token
	}
	send := func(method, path, tok string, body []byte) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, proxy+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}

	// virtctl's requests, with the qcow2.
	createUploadDV("up-qcow2")
	start := time.Now()
	waitPhase(e, dvs, "up-qcow2", cdiv1beta1.UploadReady)
	t.Logf("up-qcow2 UploadReady after %s", time.Since(start).Round(time.Second))
	if code, body := send(http.MethodGet, "/healthz", "", nil); code != http.StatusOK {
		t.Errorf("GET /healthz: %d %s", code, body)
	}
	if code, body := send(http.MethodPost, "/v1beta1/upload-async", "", []byte("x")); code != http.StatusUnauthorized {
		t.Errorf("POST without a token: %d %s, want 401", code, body)
	}
	if code, body := send(http.MethodPost, "/v1beta1/upload-async", "eyJhbGciOiJIUzI1NiJ9.e30.c2ln", []byte("x")); code != http.StatusUnauthorized {
		t.Errorf("POST with a forged token: %d %s, want 401", code, body)
	} else {
		t.Logf("forged token: %d %s", code, body)
	}
	tok := token("up-qcow2")
	if code, body := send(http.MethodHead, "/v1beta1/upload-async", tok, nil); code != http.StatusOK {
		t.Fatalf("HEAD /v1beta1/upload-async: %d %s, want 200 (virtctl then uses the async path)", code, body)
	}
	image, err := os.ReadFile(qcow)
	if err != nil {
		t.Fatal(err)
	}
	upStart := time.Now()
	if code, body := send(http.MethodPost, "/v1beta1/upload-async", tok, image); code != http.StatusOK {
		t.Fatalf("POST /v1beta1/upload-async: %d %s", code, body)
	}
	dv := waitPhase(e, dvs, "up-qcow2", cdiv1beta1.Succeeded)
	t.Logf("up-qcow2 Succeeded %s after the upload began (%d bytes of qcow2), progress %s", time.Since(upStart).Round(time.Second), len(image), dv.Status.Progress)
	claim, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, "up-qcow2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := claim.Annotations["cdi.kubevirt.io/storage.pod.phase"]; got != "Succeeded" {
		t.Errorf("claim annotation cdi.kubevirt.io/storage.pod.phase = %q, want Succeeded (virtctl waits for it)", got)
	}
	if code, body := send(http.MethodPost, "/v1beta1/upload", token("up-qcow2"), image); code != http.StatusConflict {
		t.Errorf("a second upload: %d %s, want 409", code, body)
	}

	// nativevirt image-upload with the raw.xz; the consumer reads the demo disk.
	cli := newNVCLI(t, e.c, e.ns)
	cctx, cancel := context.WithTimeout(ctx, controllerTimeout)
	out, err := cli.command(cctx, "image-upload", "dv", "up-rawxz", "--size="+dvSize, "--image-path="+rawXZ, "--insecure").CombinedOutput()
	cancel()
	t.Logf("$ nativevirt image-upload dv up-rawxz --size=%s --image-path=%s --insecure\n%s", dvSize, filepath.Base(rawXZ), strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("nativevirt image-upload: %v", err)
	}
	if dv := waitPhase(e, dvs, "up-rawxz", cdiv1beta1.Succeeded); dv.Status.Progress != "100.0%" {
		t.Errorf("up-rawxz progress %q, want 100.0%%", dv.Status.Progress)
	}
	consume(e, e.ns, "up-rawxz", len(raw))
	checkConsumer(e, e.ns, "up-rawxz", want)

	// Not an image: the DataVolume fails and says why.
	createUploadDV("up-text")
	waitPhase(e, dvs, "up-text", cdiv1beta1.UploadReady)
	body, _ := os.ReadFile(text)
	if code, msg := send(http.MethodPost, "/v1beta1/upload", token("up-text"), body); code != http.StatusBadRequest || !strings.Contains(msg, "not a disk image") {
		t.Errorf("uploading text: %d %q, want 400 saying it is not a disk image", code, msg)
	}
	failed := waitPhase(e, dvs, "up-text", cdiv1beta1.Failed)
	if r := cond(failed, cdiv1beta1.DataVolumeRunning); !strings.Contains(r.Message, "not a disk image") {
		t.Errorf("up-text: Running %s %q, want a message saying it is not a disk image", r.Reason, r.Message)
	}
	list, _ := e.c.Kubectl("get", "dv", "-n", e.ns)
	t.Logf("$ kubectl get dv\n%s", list)

	// The demo VM boots from the uploaded qcow2.
	f := &flow{ctrlEnv: e, cli: cli}
	vm := e.demoVM(kubevirtv1.RunStrategyAlways)
	for i, v := range vm.Spec.Template.Spec.Volumes {
		if v.ContainerDisk != nil {
			vm.Spec.Template.Spec.Volumes[i].VolumeSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "up-qcow2"}}
		}
	}
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmStart := time.Now()
	f.running(demoVM, "")
	s := cli.console(demoVM)
	defer s.close()
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		t.Fatalf("console of %s: no shell prompt from the uploaded disk:\n%s", demoVM, s.all())
	}
	t.Logf("guest booted from the uploaded disk %s after the VM's creation", time.Since(vmStart).Round(time.Second))
}

// uploadFiles writes the demo disk as qcow2 and as raw.xz, and a text file, for upload.
func uploadFiles(t *testing.T, disk string, raw []byte) (qcow, rawXZ, text string) {
	t.Helper()
	dir := t.TempDir()
	qcow, rawXZ, text = filepath.Join(dir, "demo.qcow2"), filepath.Join(dir, "demo.img.xz"), filepath.Join(dir, "README")
	if out, err := exec.Command("qemu-img", "convert", "-f", "raw", "-O", "qcow2", disk, qcow).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert: %v: %s", err, out)
	}
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rawXZ, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(text, []byte("This is a text file, not a disk image.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return qcow, rawXZ, text
}
