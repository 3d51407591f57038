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
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// TestServiceExpose exposes a VM whose guest serves HTTP on 8080 with `nativevirt expose`, as a
// ClusterIP Service and as a NodePort Service, in the whole local cluster (kube-proxy, CoreDNS):
//   - the guest answers through the ClusterIP from the host, and from a pod through the
//     Service's DNS name (resolved by the cluster DNS) and its ClusterIP;
//   - through the NodePort on the nodes' addresses from the host;
//   - from the guest: its Service's name resolves, and a ClusterIP (kubernetes.default) answers;
//   - the instance's readiness probe drives the Service's endpoint: when the guest stops serving,
//     the endpoint is not ready and the ClusterIP stops answering; when it serves again, both
//     come back.
func TestServiceExpose(t *testing.T) {
	e := newCtrlEnv(t, "e2e-svc")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	vm := e.demoVM(kubevirtv1.RunStrategyAlways)
	spec := &vm.Spec.Template.Spec
	spec.Domain.Devices.Interfaces[0].Ports = []kubevirtv1.Port{{Name: "http", Port: 8080}}
	setUserData(spec, guestWeb)
	spec.ReadinessProbe = &kubevirtv1.Probe{PeriodSeconds: 1, FailureThreshold: 2, Handler: kubevirtv1.Handler{
		TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}}
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A VM without labels on its template cannot be exposed: nothing would select its pods.
	bare := e.demoVM(kubevirtv1.RunStrategyHalted)
	bare.Name = "vm-bare"
	bare.Spec.Template.ObjectMeta.Labels = nil
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, bare, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, cliTimeout)
	out, err := f.cli.command(cctx, "expose", "vm", "vm-bare", "--port", "80").CombinedOutput()
	cancel()
	if err == nil || !strings.Contains(string(out), "no labels") {
		t.Errorf("nativevirt expose of a VM without template labels: %v, %q; want a refusal", err, out)
	} else {
		t.Logf("$ nativevirt expose vm vm-bare --port 80\n%s", indentLines(strings.TrimSpace(string(out))))
	}

	// Exposed before it runs: the Services select its pods whenever they come.
	f.cli.run("expose", "vm", demoVM, "--port", "80", "--target-port", "8080")
	nodePortSvc := demoVM + "-np"
	f.cli.run("expose", "vm", demoVM, "--port", "8080", "--type", "NodePort", "--name", nodePortSvc)
	svc, err := e.kube.CoreV1().Services(e.ns).Get(ctx, demoVM, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := svc.Spec.Selector["kubevirt.io/vm"]; got != demoVM || svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Service %s: type %s, selector %v; want ClusterIP selecting the template's label kubevirt.io/vm=%s",
			svc.Name, svc.Spec.Type, svc.Spec.Selector, demoVM)
	}
	np, err := e.kube.CoreV1().Services(e.ns).Get(ctx, nodePortSvc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodePort := np.Spec.Ports[0].NodePort
	clusterIP := svc.Spec.ClusterIP

	running, pod := f.running(demoVM, "")
	f.waitFor(demoVM+" Ready once the guest serves 8080", bootTimeout, func() (bool, error) {
		st, err := f.condition(demoVM, kubevirtv1.VirtualMachineInstanceReady)
		return st == corev1.ConditionTrue, err
	})
	f.serviceEndpointReady(demoVM, pod.Status.PodIP, true)

	// From the host: the ClusterIP, and the NodePort on the address of every node.
	body, err := waitHTTP(clusterIP+":80", time.Minute)
	if err != nil || !strings.Contains(body, guestWebMarker) {
		f.dump()
		t.Fatalf("GET http://%s:80/ (ClusterIP of %s) from the host: %q, %v; want the guest's page", clusterIP, demoVM, body, err)
	}
	t.Logf("GET http://%s:80/ (ClusterIP) from the host: %s", clusterIP, guestWebMarker)
	nodes, err := e.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		ip := nodeInternalIP(&n)
		body, err := waitHTTP(fmt.Sprintf("%s:%d", ip, nodePort), time.Minute)
		if err != nil || !strings.Contains(body, guestWebMarker) {
			t.Errorf("GET http://%s:%d/ (NodePort of node %s) from the host: %q, %v; want the guest's page", ip, nodePort, n.Name, body, err)
			continue
		}
		t.Logf("GET http://%s:%d/ (NodePort on node %s) from the host: %s", ip, nodePort, n.Name, guestWebMarker)
	}

	// From a pod: the Service's DNS name resolves to its ClusterIP (the pod's resolv.conf names
	// the cluster DNS and its search domains), and the guest's page comes by the full name, by
	// the short name and by the ClusterIP. (Busybox's wget crashes with -T: timeout bounds it.)
	fqdn := fmt.Sprintf("%s.%s.svc.cluster.local", demoVM, e.ns)
	resolve := fmt.Sprintf(`$(nslookup %s | awk '/^Address: / && !/:53$/ {print $2}' | tail -n 1)`, fqdn)
	get := func(host string) string { return fmt.Sprintf("timeout 20 wget -q -O- http://%s/index.html", host) }
	script := fmt.Sprintf(`echo "resolved=%s"; %s && %s && %s`, resolve, get(fqdn), get(demoVM), get(clusterIP))
	logs := e.runPod("client", script)
	if n := strings.Count(logs, guestWebMarker); n != 3 || !strings.Contains(logs, "resolved="+clusterIP+"\n") {
		t.Errorf("a pod resolving %s (want %s) and fetching the page by that name, by %s and by the ClusterIP: %d pages, want 3; output:\n%s",
			fqdn, clusterIP, demoVM, n, logs)
	} else {
		t.Logf("from a pod: %s resolves to %s; the guest's page by that name, by %s and by the ClusterIP", fqdn, clusterIP, demoVM)
	}

	// From the guest: names resolve through the cluster DNS and the search domains its DHCP
	// lease hands out, and a ClusterIP answers through the masquerade and the host's rules: its
	// own Service's name resolves, and kube-apiserver answers through the kubernetes Service by
	// its short name (plain HTTP to its TLS port: a 400 proves the connection). (The guest's
	// own Service does not answer the guest yet: the hairpin through its own pod's NAT.)
	s := f.cli.console(running.Name)
	defer s.close()
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		t.Fatalf("no shell prompt on the console:\n%s", s.all())
	}
	s.send(fmt.Sprintf(`echo "guest-dns-[%s]-$(timeout 20 wget -q -O- http://kubernetes.default:443/ 2>&1 | grep -c '400 Bad Request')"`, resolve))
	m := s.expect(regexp.MustCompile(`guest-dns-\[([0-9.]*)\]-([0-9]+)`), time.Minute, false)
	if m == nil || m[1] != clusterIP || m[2] != "1" {
		t.Errorf("from the guest: resolving %s (want %s) and reaching kube-apiserver at http://kubernetes.default:443/ (want a 400):\n%s",
			fqdn, clusterIP, s.all())
	} else {
		t.Logf("from the guest: %s resolves to %s; kubernetes.default:443 (a ClusterIP) answers", fqdn, clusterIP)
	}

	// Readiness drives the endpoint: the guest stops serving 8080, the probe fails, the endpoint
	// is not ready and the ClusterIP no longer answers.
	s.send("kill $(pidof httpd); echo web-stopped-$((40+3))")
	if s.expect(regexp.MustCompile(`web-stopped-43`), time.Minute, false) == nil {
		t.Fatalf("the guest did not stop its web servers:\n%s", s.all())
	}
	f.waitFor(demoVM+" not Ready once its probe fails", controllerTimeout, func() (bool, error) {
		st, err := f.condition(demoVM, kubevirtv1.VirtualMachineInstanceReady)
		return st == corev1.ConditionFalse, err
	})
	f.serviceEndpointReady(demoVM, pod.Status.PodIP, false)
	if body, err := httpGet(clusterIP+":80", 5*time.Second); err == nil {
		t.Errorf("the ClusterIP answered with no ready endpoint: %q", body)
	} else {
		t.Logf("GET http://%s:80/ with no ready endpoint: %v", clusterIP, err)
	}
	s.send("httpd -p 8080 -h /run/www && echo web-again-$((40+4))")
	if s.expect(regexp.MustCompile(`web-again-44`), time.Minute, false) == nil {
		t.Fatalf("the guest did not start its web server again:\n%s", s.all())
	}
	f.serviceEndpointReady(demoVM, pod.Status.PodIP, true)
	if body, err := waitHTTP(clusterIP+":80", time.Minute); err != nil || !strings.Contains(body, guestWebMarker) {
		t.Errorf("GET http://%s:80/ once ready again: %q, %v", clusterIP, body, err)
	}
	e.show("exposed")
}

// serviceEndpointReady waits until the EndpointSlices of Service svc list ip with the given
// readiness.
func (f *flow) serviceEndpointReady(svc, ip string, want bool) {
	f.t.Helper()
	f.waitFor(fmt.Sprintf("the endpoint %s of Service %s ready=%t", ip, svc, want), controllerTimeout, func() (bool, error) {
		slices, err := f.kube.DiscoveryV1().EndpointSlices(f.ns).List(context.Background(),
			metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
		if err != nil {
			return false, err
		}
		for _, sl := range slices.Items {
			for _, ep := range sl.Endpoints {
				if len(ep.Addresses) == 0 || ep.Addresses[0] != ip {
					continue
				}
				got := ep.Conditions.Ready != nil && *ep.Conditions.Ready
				return got == want, fmt.Errorf("endpoint ready=%t", got)
			}
		}
		return false, fmt.Errorf("no endpoint for %s in %d slices", ip, len(slices.Items))
	})
	f.t.Logf("Service %s: endpoint %s ready=%t", svc, ip, want)
}

// runPod runs script in a run-once busybox pod of the test's namespace and returns its output.
func (e *ctrlEnv) runPod(name, script string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), controllerTimeout)
	defer cancel()
	if _, err := e.c.KubectlInput(busyboxPod(e.ns, name, script), "apply", "-f", "-"); err != nil {
		e.t.Fatal(err)
	}
	phase, err := waitForPodDone(ctx, e.c, e.ns, name)
	if err != nil {
		e.t.Fatal(err)
	}
	logs, err := e.c.Kubectl("-n", e.ns, "logs", name)
	if err != nil {
		e.t.Fatal(err)
	}
	if phase != "Succeeded" {
		e.t.Errorf("pod %s ended %s:\n%s", name, phase, logs)
	}
	return logs
}
