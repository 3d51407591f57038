/*
Copyright The NativeVirt Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
)

// The HA installation's names (artifacts/deploy/overlays/production, artifacts/local/ha).
const (
	haNamespace    = "nativevirt"
	haEtcdSelector = "app.kubernetes.io/name=nativevirt-etcd"
	haAPISelector  = "app.kubernetes.io/name=nativevirt-apiserver"
	haCtrlSelector = "app.kubernetes.io/name=nativevirt-controller"
	haLease        = "nativevirt-controller"
)

// haAPIServices are the APIServices the two API servers back (hack/deploy-local.sh).
var haAPIServices = []string{"v1.kubevirt.io", "v1alpha3.kubevirt.io", "v1.subresources.kubevirt.io",
	"v1beta1.instancetype.kubevirt.io", "v1beta1.cdi.kubevirt.io", "v1beta1.upload.cdi.kubevirt.io"}

// TestHAInstall checks the HA installation as deployed by `make run HA=1` (NV_HA=1: make
// test-e2e-ha): three etcd members with TLS on provisioned claims, all healthy under one leader;
// two API servers that both serve, sharing that etcd (a VM created through one is read through
// the other); and two controller replicas under leader election: the leader's pod deleted, then
// the next leader's process killed, the Lease passes to a live replica each time and a VM
// still starts.
func TestHAInstall(t *testing.T) {
	c := requireCluster(t)
	if !c.HA() {
		t.Skip("the HA installation is deployed with NV_HA=1 only: make test-e2e-ha")
	}
	e := newCtrlEnv(t, "ha")
	haDumpOnFailure(t, e)

	t.Run("etcd", func(t *testing.T) { haCheckEtcd(t, e) })
	t.Run("apiservers", func(t *testing.T) { haCheckAPIServers(t, e) })
	t.Run("leader", func(t *testing.T) { haCheckLeaderHandover(t, e) })
}

// haPods lists the Running and Ready pods of selector in the installation's namespace.
func haPods(e *ctrlEnv, selector string) ([]corev1.Pod, error) {
	pods, err := e.kube.CoreV1().Pods(haNamespace).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var ready []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(&p) {
			ready = append(ready, p)
		}
	}
	return ready, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// haCheckEtcd: three Ready members, each on a bound claim of the default StorageClass, each
// healthy (/health on its metrics port: it has a leader and serves a quorum read), exactly one
// leader, and clients without a certificate of the etcd CA refused on the TLS client port.
func haCheckEtcd(t *testing.T, e *ctrlEnv) {
	var members []corev1.Pod
	e.wait("three Ready etcd members", func() (bool, error) {
		var err error
		members, err = haPods(e, haEtcdSelector)
		return len(members) == 3, err
	})
	certs := filepath.Join(e.c.Dir(), "certs", "etcd")
	withCert := etcdClient(t, certs, true)
	noCert := etcdClient(t, certs, false)
	leaders := 0
	for _, m := range members {
		claim, err := e.kube.CoreV1().PersistentVolumeClaims(haNamespace).Get(context.Background(), "data-"+m.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the claim of %s: %v", m.Name, err)
		}
		if claim.Status.Phase != corev1.ClaimBound || claim.Spec.StorageClassName == nil {
			t.Fatalf("claim %s: phase %s, class %v: want Bound, provisioned", claim.Name, claim.Status.Phase, claim.Spec.StorageClassName)
		}
		health := httpBody(t, http.DefaultClient, fmt.Sprintf("http://%s:2381/health", m.Status.PodIP))
		if !strings.Contains(health, `"health":"true"`) {
			t.Fatalf("%s /health: %s", m.Name, health)
		}
		metrics := httpBody(t, http.DefaultClient, fmt.Sprintf("http://%s:2381/metrics", m.Status.PodIP))
		if !strings.Contains(metrics, "\netcd_server_has_leader 1\n") {
			t.Fatalf("%s has no leader (etcd_server_has_leader)", m.Name)
		}
		if strings.Contains(metrics, "\netcd_server_is_leader 1\n") {
			leaders++
		}
		// The client port: TLS with the members' serving certificate, client certificates required.
		url := fmt.Sprintf("https://%s:2379/health", m.Status.PodIP)
		withCert.Transport.(*http.Transport).TLSClientConfig.ServerName = m.Name + ".nativevirt-etcd.nativevirt.svc"
		if body := httpBody(t, withCert, url); !strings.Contains(body, `"health":"true"`) {
			t.Fatalf("%s over TLS with the API server's client certificate: %s", m.Name, body)
		}
		noCert.Transport.(*http.Transport).TLSClientConfig.ServerName = m.Name + ".nativevirt-etcd.nativevirt.svc"
		if resp, err := noCert.Get(url); err == nil {
			resp.Body.Close()
			t.Fatalf("%s answered a client without a certificate: %s", m.Name, resp.Status)
		}
		t.Logf("%s on %s: healthy, claim %s (%s) bound", m.Name, m.Spec.NodeName, claim.Name, *claim.Spec.StorageClassName)
	}
	if leaders != 1 {
		t.Fatalf("%d etcd members say they lead, want 1", leaders)
	}
}

// etcdClient is an HTTPS client trusting the etcd CA, with the API server's client certificate
// when withCert.
func etcdClient(t *testing.T, certs string, withCert bool) *http.Client {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(certs, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("no certificate in the etcd CA file")
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if withCert {
		pair, err := tls.LoadX509KeyPair(filepath.Join(certs, "client.crt"), filepath.Join(certs, "client.key"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

func httpBody(t *testing.T, client *http.Client, url string) string {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v: %s", url, resp.Status, err, b)
	}
	return string(b)
}

// haCheckAPIServers: two Ready API servers, every APIService Available, and each server
// answering directly at its pod's address: a VM created through the first is read, with the
// same UID and resourceVersion, through the second, and its update through the second is read
// through the first.
func haCheckAPIServers(t *testing.T, e *ctrlEnv) {
	var servers []corev1.Pod
	e.wait("two Ready nativevirt-apiservers", func() (bool, error) {
		var err error
		servers, err = haPods(e, haAPISelector)
		return len(servers) == 2, err
	})
	for _, svc := range haAPIServices {
		e.wait("APIService "+svc+" Available", func() (bool, error) {
			out, err := e.c.Kubectl("get", "apiservice", svc, "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
			return strings.TrimSpace(out) == "True", err
		})
	}
	a, b := apiserverClient(t, e, &servers[0]), apiserverClient(t, e, &servers[1])
	t.Logf("API servers %s on %s (%s) and %s on %s (%s)", servers[0].Name, servers[0].Spec.NodeName, servers[0].Status.PodIP,
		servers[1].Name, servers[1].Spec.NodeName, servers[1].Status.PodIP)

	ctx := context.Background()
	vm, err := a.KubevirtV1().VirtualMachines(e.ns).Create(ctx, e.demoVM(kubevirtv1.RunStrategyHalted), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through %s: %v", servers[0].Name, err)
	}
	// The controller writes a new VM's status once (Stopped): wait for it, so that nobody else
	// writes the VM between the reads and the update below.
	var created *kubevirtv1.VirtualMachine
	e.wait("VM "+vm.Name+" Stopped, read through "+servers[0].Name, func() (bool, error) {
		created, err = a.KubevirtV1().VirtualMachines(e.ns).Get(ctx, vm.Name, metav1.GetOptions{})
		return err == nil && created.Status.PrintableStatus == kubevirtv1.VirtualMachineStatusStopped, err
	})
	read, err := b.KubevirtV1().VirtualMachines(e.ns).Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read through %s: %v", servers[1].Name, err)
	}
	if read.UID != created.UID || read.ResourceVersion != created.ResourceVersion {
		t.Fatalf("%s read %s/%s, %s created %s/%s", servers[1].Name, read.UID, read.ResourceVersion, servers[0].Name, created.UID, created.ResourceVersion)
	}
	read.Labels = map[string]string{"nativevirt.io/ha-test": "updated"}
	updated, err := b.KubevirtV1().VirtualMachines(e.ns).Update(ctx, read, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update through %s: %v", servers[1].Name, err)
	}
	back, err := a.KubevirtV1().VirtualMachines(e.ns).Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read back through %s: %v", servers[0].Name, err)
	}
	if back.ResourceVersion != updated.ResourceVersion || back.Labels["nativevirt.io/ha-test"] != "updated" {
		t.Fatalf("%s read resourceVersion %s labels %v after the update to %s through %s", servers[0].Name,
			back.ResourceVersion, back.Labels, updated.ResourceVersion, servers[1].Name)
	}
	t.Logf("VM %s created through %s, read and updated through %s, read back through %s (resourceVersion %s)",
		created.Name, servers[0].Name, servers[1].Name, servers[0].Name, updated.ResourceVersion)
}

// apiserverClient talks to one API server pod directly (not through kube-apiserver), as the admin
// (a client certificate of the cluster's client CA, which the server trusts through delegated
// authentication), verifying the server's serving certificate.
func apiserverClient(t *testing.T, e *ctrlEnv, pod *corev1.Pod) *versioned.Clientset {
	t.Helper()
	admin, err := e.c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(admin)
	cfg.Host = "https://" + pod.Status.PodIP + ":8443"
	cfg.CAData = nil
	cfg.CAFile = filepath.Join(e.c.Dir(), "certs", "nativevirt-apiserver", "ca.crt")
	cfg.ServerName = "nativevirt-apiserver.nativevirt.svc"
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// leaseHolder is the pod name in the Lease's holder identity (<pod>_<uuid>) and its transitions.
func leaseHolder(e *ctrlEnv) (string, int32, error) {
	identity, transitions, err := leaseIdentity(e)
	pod, _, _ := strings.Cut(identity, "_")
	return pod, transitions, err
}

// leaseIdentity is the Lease's holder identity (one per process) and its transitions.
func leaseIdentity(e *ctrlEnv) (string, int32, error) {
	l, err := e.kube.CoordinationV1().Leases(haNamespace).Get(context.Background(), haLease, metav1.GetOptions{})
	if err != nil {
		return "", 0, err
	}
	identity, transitions := "", int32(0)
	if l.Spec.HolderIdentity != nil {
		identity = *l.Spec.HolderIdentity
	}
	if l.Spec.LeaseTransitions != nil {
		transitions = *l.Spec.LeaseTransitions
	}
	return identity, transitions, nil
}

// haLeaderAndFollower waits for two Ready controller replicas, one of them holding the Lease.
func haLeaderAndFollower(e *ctrlEnv) (leader, follower corev1.Pod) {
	e.wait("two Ready controller replicas, one of them leading", func() (bool, error) {
		pods, err := haPods(e, haCtrlSelector)
		if err != nil || len(pods) != 2 {
			return false, err
		}
		holder, _, err := leaseHolder(e)
		switch {
		case err != nil:
			return false, err
		case holder == pods[0].Name:
			leader, follower = pods[0], pods[1]
		case holder == pods[1].Name:
			leader, follower = pods[1], pods[0]
		default:
			return false, fmt.Errorf("the Lease is held by %q, not by a Ready replica", holder)
		}
		return true, nil
	})
	return leader, follower
}

// haCheckLeaderHandover deletes the leader's pod (it releases the Lease on its way out), then
// kills the next leader's process (it releases nothing: the Lease expires), and each time
// measures until another live replica holds the Lease; then a VM starts.
func haCheckLeaderHandover(t *testing.T, e *ctrlEnv) {
	leader, follower := haLeaderAndFollower(e)
	_, before, err := leaseHolder(e)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := e.kube.CoreV1().Pods(haNamespace).Delete(context.Background(), leader.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The follower, normally; the Deployment's replacement pod if it was quicker.
	e.wait("the Lease held by another replica than "+leader.Name, func() (bool, error) {
		holder, _, err := leaseHolder(e)
		return holder != "" && holder != leader.Name, err
	})
	holder, after, _ := leaseHolder(e)
	t.Logf("leader pod %s deleted: %s leads after %.1f s (lease transitions %d -> %d; the follower was %s)", leader.Name, holder,
		time.Since(start).Seconds(), before, after, follower.Name)

	// The new leader killed: no release, the others wait for the Lease to expire.
	leader, _ = haLeaderAndFollower(e)
	killed, _, err := leaseIdentity(e)
	if err != nil {
		t.Fatal(err)
	}
	pids := podProcesses(leader.UID, "nativevirt-cont")
	if len(pids) != 1 {
		t.Fatalf("controller processes of %s: %v, want one", leader.Name, pids)
	}
	start = time.Now()
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Another process holds the Lease: the other replica's, or the killed container's successor
	// (each process has an identity of its own).
	e.wait("the Lease held by another process than the killed leader's", func() (bool, error) {
		identity, _, err := leaseIdentity(e)
		return err == nil && identity != "" && identity != killed, err
	})
	holder, _, _ = leaseHolder(e)
	t.Logf("leader process of %s killed (SIGKILL): %s leads after %.1f s", leader.Name, holder, time.Since(start).Seconds())

	// The new leader acts: a VM with runStrategy Always gets a running instance.
	vm, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(context.Background(), haNamed(e.demoVM(kubevirtv1.RunStrategyAlways), "ha-start"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	e.wait("VMI "+vm.Name+" Running", func() (bool, error) {
		v, err := e.vmi(vm.Name)
		return err == nil && v.Status.Phase == kubevirtv1.Running, nil
	})
	t.Logf("VM %s Running %.1f s after its creation, under leader %s", vm.Name, time.Since(start).Seconds(), holder)
	e.show("after the handovers")
}

func haNamed(vm *kubevirtv1.VirtualMachine, name string) *kubevirtv1.VirtualMachine {
	vm.Name = name
	return vm
}
