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
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

const (
	// bridgeIP is the node's address on the pod network (hack/cluster/lib.sh NV_BRIDGE_IP).
	bridgeIP = "10.88.0.1"
	// guestWeb is the cloud-init user data of the network test: the demo guest serves a page
	// on ports 8080 (declared) and 8081 (not declared) with busybox httpd.
	guestWeb = "#!/bin/sh\nmkdir -p /run/www && echo guest-web-$((6*7)) >/run/www/index.html\n" +
		"httpd -p 8080 -h /run/www && httpd -p 8081 -h /run/www && echo web-servers-started\n"
	guestWebMarker = "guest-web-42"
)

// TestMasqueradeNetwork runs the demo guest with the masquerade binding and a declared port in
// a real launcher pod: the node agent prepares the tap, bridge and NAT in the pod's network
// namespace, the launcher serves DHCP. The guest's declared port is reachable on the pod IP
// (from the node and through kubectl port-forward), an undeclared one is not, the guest's own
// connections leave from the pod IP, and the instance reports the pod IP.
func TestMasqueradeNetwork(t *testing.T) {
	e := newCtrlEnv(t, "e2e-net")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	spec := e.demoVM(kubevirtv1.RunStrategyManual).Spec.Template.Spec
	spec.Domain.Devices.Interfaces[0].Ports = []kubevirtv1.Port{{Name: "http", Port: 8080}}
	setUserData(&spec, guestWeb)
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vmi-net", Namespace: e.ns}, Spec: spec}
	if _, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running, pod := f.running(vmi.Name, "")
	podIP := pod.Status.PodIP
	if podIP == "" {
		t.Fatalf("launcher pod %s has no IP", pod.Name)
	}

	// The instance reports the pod IP, as KubeVirt does for masquerade.
	if ifs := running.Status.Interfaces; len(ifs) != 1 || ifs[0].Name != "default" || ifs[0].IP != podIP {
		t.Errorf("status.interfaces %+v, want interface default with the pod IP %s", ifs, podIP)
	}
	out, err := e.c.Kubectl("get", "vmi", vmi.Name, "-n", e.ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("$ kubectl get vmi %s\n%s", vmi.Name, out)
	if !regexp.MustCompile(`(?m)^vmi-net\s+\S+\s+Running\s+` + regexp.QuoteMeta(podIP) + `\s`).MatchString(out) {
		t.Errorf("kubectl get vmi does not show the pod IP %s in the IP column", podIP)
	}

	// Inside the guest: the DHCP lease and the web servers.
	s := f.cli.console(vmi.Name)
	defer s.close()
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		t.Fatalf("no shell prompt on the console:\n%s", s.all())
	}
	s.send("echo lease-$(ip -4 -o addr show dev eth0 | grep -c 'inet 10.0.2.2/24')-$(ip route | grep -c 'default via 10.0.2.1')-$(wget -qO- http://127.0.0.1:8081/index.html)")
	if s.expect(regexp.MustCompile(`lease-1-1-`+guestWebMarker), time.Minute, false) == nil {
		f.dump()
		t.Fatalf("the guest has no DHCP lease 10.0.2.2/24 via 10.0.2.1 or no web server:\n%s", s.all())
	}

	// The declared port on the pod IP, from the node.
	body, err := waitHTTP(podIP+":8080", time.Minute)
	if err != nil || !strings.Contains(body, guestWebMarker) {
		f.dump()
		t.Fatalf("GET http://%s:8080/ from the node: %q, %v; want the guest's page", podIP, body, err)
	}
	t.Logf("GET http://%s:8080/ from the node: %s", podIP, guestWebMarker)
	// Not declared: the pod answers (refuses) itself, the guest is not reached.
	if body, err := httpGet(podIP+":8081", 5*time.Second); err == nil {
		t.Errorf("undeclared port 8081 answered from the pod IP: %q", body)
	} else {
		t.Logf("GET http://%s:8081/ (not declared): %v", podIP, err)
	}

	// kubectl port-forward connects to 127.0.0.1:8080 inside the pod.
	pfCtx, stopPF := context.WithCancel(ctx)
	defer stopPF()
	getThroughForward(t, e.c.KubectlCommand(pfCtx, "port-forward", "-n", e.ns, "pod/"+pod.Name, ":8080"), "kubectl port-forward")
	// nativevirt port-forward (KubeVirt's portforward subresource): the apiserver, the node
	// agent, a connection made in the pod's network namespace, the NAT to the guest.
	getThroughForward(t, f.cli.command(pfCtx, "port-forward", "vmi/"+vmi.Name, ":8080"), "nativevirt port-forward")
	// --stdio, as ssh's ProxyCommand uses it: a request on its input, the guest's answer on its
	// output; the guest's web server closes after answering, which ends the command.
	stdio := f.cli.command(pfCtx, "port-forward", "--stdio", "vmi/"+vmi.Name, "8080")
	stdin, err := stdio.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := stdio.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := stdio.Start(); err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(stdin, "GET /index.html HTTP/1.0\r\n\r\n")
	answer := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(stdout); answer <- b }()
	select {
	case b := <-answer:
		if !strings.Contains(string(b), guestWebMarker) {
			t.Errorf("nativevirt port-forward --stdio answered %q, want the guest's page", b)
		} else {
			t.Logf("nativevirt port-forward --stdio: HTTP/1.0 GET answered with %s", guestWebMarker)
		}
	case <-time.After(30 * time.Second):
		t.Error("nativevirt port-forward --stdio: no answer within 30 s")
	}
	_ = stdin.Close()
	_ = stdio.Process.Kill()
	_ = stdio.Wait()
	// A port the guest does not get (not declared): refused at once, with the reason.
	refusedCtx, cancelRefused := context.WithTimeout(ctx, cliTimeout)
	refused, err := f.cli.command(refusedCtx, "port-forward", "vmi/"+vmi.Name, ":8081").CombinedOutput()
	cancelRefused()
	if err == nil || !strings.Contains(string(refused), "connecting to port 8081/tcp") {
		t.Errorf("nativevirt port-forward to the undeclared port 8081: %v\n%s\nwant a refusal naming the port", err, refused)
	} else {
		t.Logf("nativevirt port-forward to the undeclared port 8081: %s", strings.TrimSpace(string(refused)))
	}

	// The guest's own connection leaves from the pod IP.
	ln, err := net.Listen("tcp4", bridgeIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	s.send(fmt.Sprintf("echo from-guest-$((3*3)) | nc %s %d", bridgeIP, port))
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(time.Minute))
	c, err := ln.Accept()
	if err != nil {
		f.dump()
		t.Fatalf("no connection from the guest to %s:%d: %v\n%s", bridgeIP, port, err, s.all())
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	got, _ := io.ReadAll(c)
	c.Close()
	peer := c.RemoteAddr().(*net.TCPAddr).IP.String()
	if peer != podIP || strings.TrimSpace(string(got)) != "from-guest-9" {
		t.Errorf("the guest's connection came from %s with %q, want %s (the pod IP) with from-guest-9", peer, got, podIP)
	}
	t.Logf("the guest's connection to %s:%d arrived from %s (the pod IP)", bridgeIP, port, peer)

	if _, err := e.c.Kubectl("delete", "vmi", vmi.Name, "-n", e.ns, "--wait=false"); err != nil {
		t.Fatal(err)
	}
	f.goneWithPods(vmi.Name, running.UID)
}

// setUserData replaces the cloud-init user data of the demo spec.
func setUserData(spec *kubevirtv1.VirtualMachineInstanceSpec, userData string) {
	for i := range spec.Volumes {
		if spec.Volumes[i].CloudInitNoCloud != nil {
			spec.Volumes[i].CloudInitNoCloud.UserData = userData
		}
	}
}

// httpGet fetches /index.html from addr with HTTP/1.0.
func httpGet(addr string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp4", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, "GET /index.html HTTP/1.0\r\n\r\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// waitHTTP retries httpGet until the page comes or timeout passes.
func waitHTTP(addr string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		body, err := httpGet(addr, 5*time.Second)
		if (err == nil && strings.Contains(body, "200 OK")) || time.Now().After(deadline) {
			return body, err
		}
		time.Sleep(time.Second)
	}
}

// getThroughForward starts a port-forward command that prints "Forwarding from ADDR -> 8080"
// (kubectl's and nativevirt's alike), GETs the guest's page through ADDR and stops it.
func getThroughForward(t *testing.T, pf *exec.Cmd, what string) {
	t.Helper()
	pfOut, err := pf.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := pf.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = pf.Process.Kill()
		_ = pf.Wait()
	}()
	local := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pfOut)
		re := regexp.MustCompile(`Forwarding from (127\.0\.0\.1:\d+) -> 8080`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				local <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, pfOut)
	}()
	select {
	case addr := <-local:
		body, err := waitHTTP(addr, 30*time.Second)
		if err != nil || !strings.Contains(body, guestWebMarker) {
			t.Errorf("GET through %s %s: %q, %v; want the guest's page", what, addr, body, err)
		} else {
			t.Logf("GET through %s (%s -> 127.0.0.1:8080 in the pod): %s", what, addr, guestWebMarker)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("%s did not start", what)
	}
}
