package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	cdiclient "github.com/nativevirt/nativevirt/pkg/client/clientset/versioned/typed/cdi/v1beta1"
)

// dvSize is the size of TestDataVolumes' DataVolumes (the demo disk is 15 MiB).
const dvSize = "64Mi"

// TestDataVolumes populates DataVolumes on the cluster's default StorageClass (local-path,
// WaitForFirstConsumer) from an HTTP server run by the test on the pods' bridge: the demo guest
// disk as qcow2 and as raw.gz, a blank disk, the demo containerDisk image read from the node
// (registry, pullMethod node), and a clone of the raw.gz import into another namespace. Each
// DataVolume's first consumer is a busybox pod that waits for disk.img and prints its checksum,
// which must be the demo disk's. A URL that answers 404 shows why in the Running condition
// while the importer retries; a text file Fails with "not a disk image".
func TestDataVolumes(t *testing.T) {
	e := newCtrlEnv(t, "e2e-dv")
	ctx := context.Background()
	disk, raw, want := e.demoDisk()
	base := serveImages(t, disk, raw)
	t.Logf("serving the demo disk (%d bytes, sha256 %s…) at %s", len(raw), want[:12], base)

	dvs := e.kv.CdiV1beta1().DataVolumes(e.ns)
	start := time.Now()
	create := func(name string, src cdiv1beta1.DataVolumeSource) {
		t.Helper()
		dv := &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cdiv1beta1.DataVolumeSpec{
			Source: &src,
			Storage: &cdiv1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(dvSize)}}},
		}}
		if _, err := dvs.Create(ctx, dv, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create DataVolume %s: %v", name, err)
		}
	}
	node := cdiv1beta1.RegistryPullNode
	create("http-qcow2", cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: base + "/demo.qcow2"}})
	create("http-rawgz", cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: base + "/demo.img.gz"}})
	create("blank", cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}})
	create("registry", cdiv1beta1.DataVolumeSource{Registry: &cdiv1beta1.DataVolumeSourceRegistry{
		URL: ptrTo("docker://localhost/nativevirt-demo-disk:dev"), PullMethod: &node}})
	create("broken", cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: base + "/missing.qcow2"}})
	create("text", cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: base + "/README"}})

	// Unconsumed claims of a WaitForFirstConsumer class wait.
	waitPhase(e, dvs, "http-qcow2", cdiv1beta1.WaitForFirstConsumer)
	for _, name := range []string{"http-qcow2", "http-rawgz", "registry", "broken", "text"} {
		consume(e, e.ns, name, len(raw))
	}
	consume(e, e.ns, "blank", 0)

	for _, name := range []string{"http-qcow2", "http-rawgz", "registry"} {
		dv := waitPhase(e, dvs, name, cdiv1beta1.Succeeded)
		if dv.Status.Progress != "100.0%" || condStatus(dv, cdiv1beta1.DataVolumeReady) != corev1.ConditionTrue {
			t.Errorf("%s: progress %q, Ready %s; want 100.0%% and True", name, dv.Status.Progress, condStatus(dv, cdiv1beta1.DataVolumeReady))
		}
		checkConsumer(e, e.ns, name, want)
		t.Logf("%s Succeeded after %s: %s", name, time.Since(start).Round(time.Second), successEvent(e, e.ns, name))
	}
	waitPhase(e, dvs, "blank", cdiv1beta1.Succeeded)
	if out := consumerLog(e, e.ns, "blank"); !strings.Contains(out, fmt.Sprintf("size=%d", 64<<20)) {
		t.Errorf("blank disk.img: %q, want 64 MiB", out)
	}

	// A 404: the importer retries with back-off and the reason shows.
	e.wait("broken: the 404 in its Running condition", func() (bool, error) {
		dv, err := dvs.Get(ctx, "broken", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		r := cond(dv, cdiv1beta1.DataVolumeRunning)
		return r.Status == corev1.ConditionFalse && strings.Contains(r.Message, "got 404"),
			fmt.Errorf("phase %s, Running %s %s %q", dv.Status.Phase, r.Status, r.Reason, r.Message)
	})
	broken, _ := dvs.Get(ctx, "broken", metav1.GetOptions{})
	r := cond(broken, cdiv1beta1.DataVolumeRunning)
	t.Logf("broken: phase %s, restarts %d, Running=%s %s: %s", broken.Status.Phase, broken.Status.RestartCount, r.Status, r.Reason, r.Message)
	text := waitPhase(e, dvs, "text", cdiv1beta1.Failed)
	if r := cond(text, cdiv1beta1.DataVolumeRunning); !strings.Contains(r.Message, "not a disk image") {
		t.Errorf("text: Running %s %q, want a message saying it is not a disk image", r.Reason, r.Message)
	} else {
		t.Logf("text: Failed: %s", r.Message)
	}

	// A clone into another namespace (the test's user is an admin: create datavolumes/source).
	target := testNamespace(t, e.c, "e2e-dv-clone")
	clones := e.kv.CdiV1beta1().DataVolumes(target)
	if _, err := clones.Create(ctx, &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "clone"}, Spec: cdiv1beta1.DataVolumeSpec{
		Source:  &cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: e.ns, Name: "http-rawgz"}},
		Storage: &cdiv1beta1.StorageSpec{},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the clone: %v", err)
	}
	consume(e, target, "clone", len(raw))
	cloneStart := time.Now()
	waitPhase(e, clones, "clone", cdiv1beta1.Succeeded)
	checkConsumer(e, target, "clone", want)
	t.Logf("clone Succeeded in %s: %s", time.Since(cloneStart).Round(time.Second), successEvent(e, target, "clone"))
	out, _ := e.c.Kubectl("get", "dv", "-n", e.ns)
	t.Logf("$ kubectl get dv\n%s", out)
}

// demoDisk reads the demo guest's raw disk image from the build outputs: its path, its bytes
// and their sha256 in hex.
func (e *ctrlEnv) demoDisk() (path string, raw []byte, sum string) {
	e.t.Helper()
	path = filepath.Join(e.c.Root(), "_output", "images", "demo-disk", "disk.img")
	raw, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatalf("the demo disk (hack/images/build-demo-disk.sh): %v", err)
	}
	return path, raw, fmt.Sprintf("%x", sha256.Sum256(raw))
}

// serveImages serves the demo disk on the pods' bridge address: /demo.qcow2 (converted with
// qemu-img), /demo.img.gz, and /README (text). It returns the base URL.
func serveImages(t *testing.T, disk string, raw []byte) string {
	t.Helper()
	dir := t.TempDir()
	qcow := filepath.Join(dir, "demo.qcow2")
	if out, err := exec.Command("qemu-img", "convert", "-f", "raw", "-O", "qcow2", disk, qcow).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert: %v: %s", err, out)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	if _, err := w.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "demo.img.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("This directory holds disk images.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", podBridgeIP(t)+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// podBridgeIP is this machine's address on the pod network (10.88.0.0/16), which pods reach.
func podBridgeIP(t *testing.T) string {
	t.Helper()
	_, podNet, _ := net.ParseCIDR("10.88.0.0/16")
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && podNet.Contains(n.IP) && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Fatal("no address of this machine on the pod network 10.88.0.0/16")
	return ""
}

// consume starts the first consumer of a DataVolume's claim: a busybox pod that waits for
// disk.img (which appears only once complete), prints its size and the sha256 of its first n
// bytes (the source's length), and ends.
func consume(e *ctrlEnv, ns, name string, n int) {
	e.t.Helper()
	script := fmt.Sprintf(`while [ ! -f /data/disk.img ]; do sleep 1; done
echo size=$(stat -c %%s /data/disk.img)
echo sha256=$(head -c %d /data/disk.img | sha256sum | cut -d' ' -f1)`, n)
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: consumer-%s
  namespace: %s
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: busybox
    image: localhost/busybox:dev
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", %q]
    volumeMounts:
    - {name: data, mountPath: /data, readOnly: true}
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: %s, readOnly: true}
`, name, ns, script, name)
	if _, err := e.c.KubectlInput(manifest, "apply", "-f", "-"); err != nil {
		e.t.Fatal(err)
	}
}

// consumerLog waits for the consumer of name to end and returns its output.
func consumerLog(e *ctrlEnv, ns, name string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), controllerTimeout)
	defer cancel()
	if _, err := waitForPodDone(ctx, e.c, ns, "consumer-"+name); err != nil {
		e.t.Fatal(err)
	}
	out, err := e.c.Kubectl("-n", ns, "logs", "consumer-"+name)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// checkConsumer checks that the consumer of name read the demo disk's checksum.
func checkConsumer(e *ctrlEnv, ns, name, want string) {
	e.t.Helper()
	if out := consumerLog(e, ns, name); !strings.Contains(out, "sha256="+want) {
		e.t.Errorf("%s: the consumer read %q, want sha256=%s", name, out, want)
	}
}

// waitPhase waits for a DataVolume's phase.
func waitPhase(e *ctrlEnv, dvs cdiclient.DataVolumeInterface, name string, phase cdiv1beta1.DataVolumePhase) *cdiv1beta1.DataVolume {
	e.t.Helper()
	var dv *cdiv1beta1.DataVolume
	e.wait(fmt.Sprintf("DataVolume %s %s", name, phase), func() (bool, error) {
		var err error
		if dv, err = dvs.Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return false, err
		}
		r := cond(dv, cdiv1beta1.DataVolumeRunning)
		return dv.Status.Phase == phase, fmt.Errorf("phase %s, progress %s, Running %s %s %q", dv.Status.Phase, dv.Status.Progress,
			r.Status, r.Reason, r.Message)
	})
	return dv
}

func cond(dv *cdiv1beta1.DataVolume, t cdiv1beta1.DataVolumeConditionType) cdiv1beta1.DataVolumeCondition {
	for _, c := range dv.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return cdiv1beta1.DataVolumeCondition{}
}

func condStatus(dv *cdiv1beta1.DataVolume, t cdiv1beta1.DataVolumeConditionType) corev1.ConditionStatus {
	return cond(dv, t).Status
}

// successEvent returns the message of a DataVolume's ImportSucceeded event (the import's size
// and rate).
func successEvent(e *ctrlEnv, ns, name string) string {
	list, err := e.kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + name + ",reason=ImportSucceeded"})
	if err != nil || len(list.Items) == 0 {
		return fmt.Sprintf("(no ImportSucceeded event: %v)", err)
	}
	return list.Items[0].Message
}
