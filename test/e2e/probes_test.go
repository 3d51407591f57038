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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

const (
	// probeWebUserData serves a page on port 8080 from boot; port 8082 (the readiness probe's)
	// is served only while the test runs a server there.
	probeWebUserData = "#!/bin/sh\nmkdir -p /run/www && echo probed >/run/www/index.html\n" +
		"httpd -p 8080 -h /run/www && echo web-server-started\n"
	// probeService selects the instance with the readiness probe.
	probeService = "probes-web"
)

// TestProbes runs KubeVirt's liveness and readiness probes in real launcher pods: the kubelet
// probes the pod IP, and the masquerade binding carries the probes to the guest.
//   - vmi-ready: a readiness probe (httpGet on the named port "ready", 8082) follows a web server
//     the test starts and stops in the guest: the instance's Ready condition and its endpoint in
//     a Service go with it. Its liveness probe (tcpSocket 8080, served from boot) keeps passing.
//   - vmi-live: a liveness probe on a port nothing listens on: the kubelet stops the launcher
//     and the instance fails. Its exec readiness probe runs a command that fails in the guest
//     (through its guest agent), and the pod's event says how. (TestGuestAgent passes both
//     kinds of guest agent probes.)
func TestProbes(t *testing.T) {
	e := newCtrlEnv(t, "e2e-probes")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	spec := e.demoVM(kubevirtv1.RunStrategyManual).Spec.Template.Spec
	setUserData(&spec, probeWebUserData)
	ready := spec.DeepCopy()
	ready.Domain.Devices.Interfaces[0].Ports = []kubevirtv1.Port{{Name: "web", Port: 8080}, {Name: "ready", Port: 8082}}
	ready.ReadinessProbe = &kubevirtv1.Probe{PeriodSeconds: 1, FailureThreshold: 2, Handler: kubevirtv1.Handler{
		HTTPGet: &corev1.HTTPGetAction{Path: "/index.html", Port: intstr.FromString("ready")}}}
	// Lenient: the guest boots under emulation before it serves 8080.
	ready.LivenessProbe = &kubevirtv1.Probe{InitialDelaySeconds: 30, PeriodSeconds: 5, FailureThreshold: 30, Handler: kubevirtv1.Handler{
		TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}}
	live := spec.DeepCopy()
	// The failing liveness probe starts late enough for the readiness probe to run a command in
	// the booted guest (its guest agent starts a few seconds after the domain).
	live.LivenessProbe = &kubevirtv1.Probe{InitialDelaySeconds: 30, PeriodSeconds: 1, FailureThreshold: 3, Handler: kubevirtv1.Handler{
		TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8083)}}}
	// Every 5 s: the kubelet records at most 25 events of a pod in a burst, and a probe failing
	// every second until the liveness probe fails would use them all up.
	live.ReadinessProbe = &kubevirtv1.Probe{PeriodSeconds: 5, TimeoutSeconds: 5, Handler: kubevirtv1.Handler{
		Exec: &corev1.ExecAction{Command: []string{"cat", "/run/no-such-file"}}}}
	for _, v := range []*kubevirtv1.VirtualMachineInstance{
		{ObjectMeta: metav1.ObjectMeta{Name: "vmi-ready", Namespace: e.ns, Labels: map[string]string{"app": probeService}}, Spec: *ready},
		{ObjectMeta: metav1.ObjectMeta{Name: "vmi-live", Namespace: e.ns}, Spec: *live},
	} {
		if _, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, v, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: probeService, Namespace: e.ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": probeService},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("web")}}},
	}
	if _, err := e.kube.CoreV1().Services(e.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	running, pod := f.running("vmi-ready", "")
	// The guest runs, the probe's port is not served: not Ready, and so no ready endpoint.
	f.waitFor("vmi-ready not Ready with the pod's reason", controllerTimeout, func() (bool, error) {
		c, err := f.readyCondition("vmi-ready")
		if err != nil || c == nil {
			return false, err
		}
		return c.Status == corev1.ConditionFalse && c.Reason == "ContainersNotReady", fmt.Errorf("Ready %+v", *c)
	})
	f.endpointReady(pod, false)

	s := f.cli.console(running.Name)
	defer s.close()
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		t.Fatalf("no shell prompt on the console:\n%s", s.all())
	}
	s.send("httpd -f -p 8082 -h /run/www & echo $! >/run/ready.pid; echo ready-server-$((40+2))")
	if s.expect(regexp.MustCompile(`ready-server-42`), time.Minute, false) == nil {
		t.Fatalf("the guest did not start the server:\n%s", s.all())
	}
	f.waitFor("vmi-ready Ready once the guest serves the probe", controllerTimeout, func() (bool, error) {
		st, err := f.condition("vmi-ready", kubevirtv1.VirtualMachineInstanceReady)
		return st == corev1.ConditionTrue, err
	})
	f.endpointReady(pod, true)
	e.show("the readiness probe passes")

	s.send("kill $(cat /run/ready.pid); echo ready-server-stopped-$((40+3))")
	if s.expect(regexp.MustCompile(`ready-server-stopped-43`), time.Minute, false) == nil {
		t.Fatalf("the guest did not stop the server:\n%s", s.all())
	}
	f.waitFor("vmi-ready not Ready again once the probe fails", controllerTimeout, func() (bool, error) {
		st, err := f.condition("vmi-ready", kubevirtv1.VirtualMachineInstanceReady)
		return st == corev1.ConditionFalse, err
	})
	f.endpointReady(pod, false)

	// The liveness probe that never passes: the kubelet stops the launcher, the guest is shut
	// down, the instance fails and its pod ends.
	f.waitFor("vmi-live Failed after its liveness probe failed", bootTimeout, func() (bool, error) {
		v, err := f.vmi("vmi-live")
		if err != nil {
			return false, err
		}
		return v.Status.Phase == kubevirtv1.Failed, fmt.Errorf("phase %s", v.Status.Phase)
	})
	liveVMI, err := f.vmi("vmi-live")
	if err != nil {
		t.Fatal(err)
	}
	events, err := e.kube.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=Unhealthy"})
	if err != nil {
		t.Fatal(err)
	}
	liveness, ping := "", ""
	for _, ev := range events.Items {
		if ev.InvolvedObject.Kind != "Pod" || !regexp.MustCompile(`^virt-launcher-vmi-live-`).MatchString(ev.InvolvedObject.Name) {
			continue
		}
		switch {
		case regexp.MustCompile(`^Liveness probe failed`).MatchString(ev.Message):
			liveness = ev.Message
		case regexp.MustCompile(`^Readiness probe failed: .*exit.*1.*No such file`).MatchString(ev.Message):
			ping = ev.Message
		}
	}
	if liveness == "" {
		t.Errorf("no Unhealthy event of vmi-live's launcher pod for its liveness probe: %d events", len(events.Items))
	} else {
		t.Logf("vmi-live failed; its launcher pod's event: %s", liveness)
	}
	// The exec readiness probe ran in the launcher container, which had the guest agent run the
	// command in the guest: its status and error output are in the event.
	if ping == "" {
		for _, ev := range events.Items {
			t.Logf("event %s: %s", ev.InvolvedObject.Name, ev.Message)
		}
		t.Errorf("no Unhealthy event of vmi-live's exec readiness probe with the command's exit status and error")
	} else {
		t.Logf("vmi-live's exec readiness probe: %s", ping)
	}

	// All along, vmi-ready's liveness probe passed: it still runs in the same pod.
	if v, err := f.vmi("vmi-ready"); err != nil || v.Status.Phase != kubevirtv1.Running || v.UID != running.UID {
		t.Errorf("vmi-ready: %v, phase %s; want the same instance still Running", err, phaseOf(v))
	}
	e.show("probes done")

	for _, name := range []string{"vmi-ready", "vmi-live"} {
		if _, err := e.c.Kubectl("delete", "vmi", name, "-n", e.ns, "--wait=false"); err != nil {
			t.Fatal(err)
		}
	}
	f.goneWithPods("vmi-ready", running.UID)
	f.goneWithPods("vmi-live", liveVMI.UID)
}

// readyCondition is the instance's Ready condition, or nil.
func (f *flow) readyCondition(name string) (*kubevirtv1.VirtualMachineInstanceCondition, error) {
	v, err := f.vmi(name)
	if err != nil {
		return nil, err
	}
	for i := range v.Status.Conditions {
		if v.Status.Conditions[i].Type == kubevirtv1.VirtualMachineInstanceReady {
			return &v.Status.Conditions[i], nil
		}
	}
	return nil, nil
}

// endpointReady waits until the probe Service's EndpointSlices list the launcher pod's IP with
// the given readiness.
func (f *flow) endpointReady(pod *corev1.Pod, want bool) {
	f.t.Helper()
	f.waitFor(fmt.Sprintf("the endpoint %s of Service %s ready=%t", pod.Status.PodIP, probeService, want), controllerTimeout, func() (bool, error) {
		slices, err := f.kube.DiscoveryV1().EndpointSlices(f.ns).List(context.Background(),
			metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + probeService})
		if err != nil {
			return false, err
		}
		for _, sl := range slices.Items {
			for _, ep := range sl.Endpoints {
				if len(ep.Addresses) == 0 || ep.Addresses[0] != pod.Status.PodIP {
					continue
				}
				got := ep.Conditions.Ready != nil && *ep.Conditions.Ready
				return got == want, fmt.Errorf("endpoint ready=%t", got)
			}
		}
		return false, fmt.Errorf("no endpoint for %s in %d slices", pod.Status.PodIP, len(slices.Items))
	})
	f.t.Logf("Service %s: endpoint %s ready=%t", probeService, pod.Status.PodIP, want)
}
