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
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

const (
	// bootTimeout bounds a start until the guest's shell prompt on the console (QEMU TCG).
	bootTimeout = 4 * time.Minute
	// demoVM is the name in artifacts/examples/vm-demo.yaml.
	demoVM = "vm-demo"
	// handlerSelector selects the node agent's pods.
	handlerSelector = "app.kubernetes.io/name=nativevirt-handler"
)

var (
	promptRE = regexp.MustCompile(`demo:~# `)
	uuidRE   = regexp.MustCompile(`(?m)^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`)
)

// flow is the state of TestVMFlow: the cluster through client-go and the CLI.
type flow struct {
	*ctrlEnv
	cli *nvCLI
}

// dump logs what a user would look at when a step fails.
func (f *flow) dump() {
	out, _ := f.c.Kubectl("get", "vm,vmi,pods", "-n", f.ns, "-o", "wide")
	f.t.Logf("kubectl get vm,vmi,pods -o wide:\n%s", out)
	out, _ = f.c.Kubectl("get", "vmi", "-n", f.ns, "-o", "jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.conditions}{\"\\n\"}{end}")
	f.t.Logf("instance conditions:\n%s", out)
	for _, target := range []string{"daemonset/nativevirt-handler", "deployment/nativevirt-controller"} {
		out, _ = f.c.Kubectl("logs", "-n", "nativevirt", target, "--tail=30")
		f.t.Logf("logs of %s:\n%s", target, out)
	}
}

// serialLogTail logs the end of the serial log that the launcher of instance name keeps.
func (f *flow) serialLogTail(name string) {
	f.t.Helper()
	vmi, err := f.vmi(name)
	if err != nil {
		f.t.Logf("serial log of %s: %v", name, err)
		return
	}
	pods, err := f.launcherPods(vmi.UID)
	if err != nil || len(pods) == 0 {
		f.t.Logf("serial log of %s: launcher pods %d (%v)", name, len(pods), err)
		return
	}
	for _, p := range pods {
		out, err := f.c.Kubectl("exec", "-n", f.ns, p.Name, "-c", "compute", "--", "tail", "-c", "1500", convert.SerialLogPath(launcherpod.PrivateDir))
		f.t.Logf("serial log of %s in pod %s (%v):\n%s", name, p.Name, err, indentLines(out))
	}
}

// waitFor polls cond every second; on timeout it dumps the state and fails the test.
func (f *flow) waitFor(what string, timeout time.Duration, cond func() (bool, error)) {
	f.t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(time.Second)
	}
	f.dump()
	f.t.Fatalf("timed out after %s waiting for %s (last: %v)", timeout, what, last)
}

// launcherPods lists the pods of the instance with uid.
func (f *flow) launcherPods(uid types.UID) ([]corev1.Pod, error) {
	pods, err := f.kube.CoreV1().Pods(f.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kubevirt.io/created-by=" + string(uid)})
	if err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// running waits for a Running instance name other than `not` with exactly one running launcher
// pod and returns both.
func (f *flow) running(name string, not types.UID) (*kubevirtv1.VirtualMachineInstance, *corev1.Pod) {
	f.t.Helper()
	var vmi *kubevirtv1.VirtualMachineInstance
	var pod *corev1.Pod
	f.waitFor("instance "+name+" Running in its launcher pod", bootTimeout, func() (bool, error) {
		v, err := f.vmi(name)
		if err != nil {
			return false, err
		}
		if v.UID == not || v.Status.Phase != kubevirtv1.Running {
			return false, fmt.Errorf("instance %s phase %s", v.UID, v.Status.Phase)
		}
		pods, err := f.launcherPods(v.UID)
		if err != nil || len(pods) != 1 || pods[0].Status.Phase != corev1.PodRunning {
			return false, fmt.Errorf("launcher pods %d (%v)", len(pods), err)
		}
		vmi, pod = v, &pods[0]
		return true, nil
	})
	f.showWide("instance " + name + " Running")
	return vmi, pod
}

// goneWithPods waits until instance name with uid and its launcher pods no longer exist.
func (f *flow) goneWithPods(name string, uid types.UID) {
	f.t.Helper()
	f.waitFor("instance "+name+" and its launcher pod gone", controllerTimeout, func() (bool, error) {
		v, err := f.vmi(name)
		if err == nil && v.UID == uid {
			return false, fmt.Errorf("instance still there (phase %s, deleting %t)", v.Status.Phase, v.DeletionTimestamp != nil)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		pods, err := f.launcherPods(uid)
		if err != nil || len(pods) != 0 {
			return false, fmt.Errorf("%d launcher pods left (%v)", len(pods), err)
		}
		return true, nil
	})
	f.showWide("instance " + name + " gone")
}

// condition is the status of the instance's condition typ ("" when absent).
func (f *flow) condition(name string, typ kubevirtv1.VirtualMachineInstanceConditionType) (corev1.ConditionStatus, error) {
	v, err := f.vmi(name)
	if err != nil {
		return "", err
	}
	for _, c := range v.Status.Conditions {
		if c.Type == typ {
			return c.Status, nil
		}
	}
	return "", nil
}

func (f *flow) showWide(step string) {
	out, err := f.c.Kubectl("get", "vm,vmi,pods", "-n", f.ns, "-o", "wide")
	if err != nil {
		f.t.Logf("%s: %v", step, err)
		return
	}
	f.t.Logf("%s:\n%s", step, out)
}

// consoleCheck connects to the console, waits for the shell prompt, has the guest compute a
// random sum (the answer cannot be the echo of the typed line) and returns the guest's SMBIOS
// system UUID.
func (f *flow) consoleCheck(name string) string {
	f.t.Helper()
	// A session refused at once (a node agent that just restarted answers 503 until it has
	// re-attached to the domain) is retried for a while; one that connected must show the prompt.
	deadline := time.Now().Add(time.Minute)
	var s *consoleSession
	for {
		s = f.cli.console(name)
		if s.expect(promptRE, bootTimeout, true) != nil {
			break
		}
		s.close()
		if time.Now().After(deadline) || strings.Contains(s.all(), "Successfully connected") {
			f.t.Logf("console transcript:\n%s", s.all())
			f.dump()
			f.t.Fatalf("console of %s: no shell prompt `demo:~# `", name)
		}
		f.t.Logf("console of %s refused, retrying: %s", name, strings.TrimSpace(s.all()))
		time.Sleep(2 * time.Second)
	}
	defer s.close()
	fail := func(what string) {
		f.t.Helper()
		f.t.Logf("console transcript:\n%s", s.all())
		// Tell a guest whose serial output stalled from output lost on the way: the guest's
		// serial log in the pod, and whether one keystroke brings the rest.
		f.serialLogTail(name)
		s.send("")
		time.Sleep(5 * time.Second)
		f.t.Logf("console after one more Enter:\n%s", indentLines(lastLines(s.all(), 6)))
		f.dump()
		f.t.Fatalf("console of %s: %s", name, what)
	}
	a, b := rand.IntN(1000000), rand.IntN(1000000)
	want := fmt.Sprintf("nv-%d-ok", a+b)
	s.send(fmt.Sprintf("echo nv-$((%d+%d))-ok", a, b))
	if s.expect(regexp.MustCompile(`(?m)^`+want+`$`), time.Minute, false) == nil {
		fail("no " + want + " answer")
	}
	s.send("cat /sys/class/dmi/id/product_uuid")
	m := s.expect(uuidRE, time.Minute, false)
	if m == nil {
		fail("no product_uuid")
	}
	f.t.Logf("console of %s:\n%s", name, indentLines(lastLines(s.all(), 8)))
	return m[1]
}

// TestVMFlow drives the demo VM through the whole stack: kubectl apply, `nativevirt start`
// through kube-apiserver aggregation, the controller's launcher pod on the kubelet, the node
// agent's domain under the launcher's libvirtd, the console and VNC through kube-apiserver →
// nativevirt-apiserver → node agent, pause/unpause, a kill -9 of the node agent while the guest
// runs, stop/start (same firmware UUID), restart (new pod), and garbage collection of the pod of
// a deleted standalone instance.
func TestVMFlow(t *testing.T) {
	e := newCtrlEnv(t, "e2e-flow")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	manifest := filepath.Join(e.c.Root(), "artifacts", "examples", "vm-demo.yaml")
	if out, err := e.c.Kubectl("apply", "-n", e.ns, "-f", manifest); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("$ kubectl apply -f artifacts/examples/vm-demo.yaml\n%s", out)
	}

	// start → Running; console and VNC through the aggregated apiserver.
	started := time.Now()
	f.cli.run("start", demoVM)
	vmi1, pod1 := f.running(demoVM, "")
	uuid1 := f.consoleCheck(demoVM)
	t.Logf("start → shell prompt in %s", time.Since(started).Round(time.Second))
	fw := ""
	if vmi1.Spec.Domain.Firmware != nil {
		fw = string(vmi1.Spec.Domain.Firmware.UUID)
	}
	if fw == "" || !strings.EqualFold(fw, uuid1) {
		t.Errorf("firmware UUID %q, guest product_uuid %q: want equal and set", fw, uuid1)
	}
	banner, err := f.cli.vncBanner(demoVM)
	if err != nil {
		f.dump()
		t.Fatalf("vnc: %v", err)
	}
	t.Logf("VNC banner through the apiserver: %q", banner)
	if !strings.HasPrefix(banner, "RFB 003.00") {
		t.Errorf("VNC banner %q, want RFB 003.00x", banner)
	}

	// guestosinfo through the apiserver and the node agent to libvirt and the demo guest's agent
	// (started before its shell).
	gaCtx, gaCancel := context.WithTimeout(context.Background(), cliTimeout)
	out, err := f.cli.command(gaCtx, "guestosinfo", demoVM).CombinedOutput()
	gaCancel()
	if err != nil || !strings.Contains(string(out), "NativeVirt demo guest") {
		t.Errorf("nativevirt guestosinfo: %v\n%s\nwant the demo guest's OS", err, out)
	} else {
		t.Logf("$ nativevirt guestosinfo %s\n%s", demoVM, strings.TrimSpace(string(out)))
	}

	// vnc screenshot: QEMU's screen dump (a PPM) as a PNG, through the apiserver and the node agent.
	shot := filepath.Join(t.TempDir(), "screen.png")
	f.cli.run("vnc", "screenshot", demoVM, "--file", shot)
	if raw, err := os.ReadFile(shot); err != nil {
		t.Errorf("the screenshot: %v", err)
	} else if cfg, err := png.DecodeConfig(bytes.NewReader(raw)); err != nil || cfg.Width < 320 || cfg.Height < 200 {
		t.Errorf("the screenshot is not a PNG of a screen: %+v, %v", cfg, err)
	} else {
		t.Logf("screenshot: a %dx%d PNG of %d bytes", cfg.Width, cfg.Height, len(raw))
	}

	// pause / unpause.
	f.cli.run("pause", "vm", demoVM)
	f.waitFor("condition Paused=True", controllerTimeout, func() (bool, error) {
		s, err := f.condition(demoVM, kubevirtv1.VirtualMachineInstancePaused)
		return s == corev1.ConditionTrue, err
	})
	f.showWide("paused")
	f.cli.run("unpause", "vm", demoVM)
	f.waitFor("condition Paused gone", controllerTimeout, func() (bool, error) {
		s, err := f.condition(demoVM, kubevirtv1.VirtualMachineInstancePaused)
		return err == nil && s != corev1.ConditionTrue, err
	})

	// kill -9 of the node agent: the guest keeps running, the agent comes back.
	f.killAgent(pod1)
	if got := f.consoleCheck(demoVM); got != uuid1 {
		t.Errorf("product_uuid after the agent restart %q, want %q", got, uuid1)
	}

	// stop → instance and pod gone; start → a new pod, the same firmware UUID.
	f.cli.run("stop", demoVM)
	f.goneWithPods(demoVM, vmi1.UID)
	f.cli.run("start", demoVM)
	vmi2, pod2 := f.running(demoVM, vmi1.UID)
	if pod2.UID == pod1.UID {
		t.Errorf("start after stop reused pod %s", pod1.Name)
	}
	if vmi2.Spec.Domain.Firmware == nil || vmi2.Spec.Domain.Firmware.UUID != vmi1.Spec.Domain.Firmware.UUID {
		t.Errorf("firmware after stop/start %+v, want UUID %s", vmi2.Spec.Domain.Firmware, fw)
	}
	if got := f.consoleCheck(demoVM); got != uuid1 {
		t.Errorf("guest product_uuid after stop/start %q, want %q", got, uuid1)
	}

	// restart → a new instance in a new pod.
	f.cli.run("restart", demoVM)
	vmi3, pod3 := f.running(demoVM, vmi2.UID)
	if pod3.UID == pod2.UID {
		t.Errorf("restart kept pod %s", pod2.Name)
	}
	f.cli.run("stop", demoVM)
	f.goneWithPods(demoVM, vmi3.UID)

	// start --paused (Halted → Always with a paused start request) → an instance with
	// startStrategy Paused, Running with the Paused condition; unpause lets it boot.
	f.cli.run("start", demoVM, "--paused")
	vmi4, _ := f.running(demoVM, vmi3.UID)
	if s := vmi4.Spec.StartStrategy; s == nil || *s != kubevirtv1.StartStrategyPaused {
		t.Errorf("the instance of start --paused has startStrategy %v, want Paused", s)
		// Seen once in many runs: what the VM and the controllers said then.
		out, _ := f.c.Kubectl("get", "vm", demoVM, "-n", f.ns, "-o", "yaml")
		t.Logf("the VM:\n%s", out)
		f.dump()
	}
	f.waitFor("condition Paused=True after start --paused", controllerTimeout, func() (bool, error) {
		s, err := f.condition(demoVM, kubevirtv1.VirtualMachineInstancePaused)
		return s == corev1.ConditionTrue, err
	})
	f.cli.run("unpause", "vm", demoVM)
	f.waitFor("condition Paused gone after the unpause", controllerTimeout, func() (bool, error) {
		s, err := f.condition(demoVM, kubevirtv1.VirtualMachineInstancePaused)
		return err == nil && s != corev1.ConditionTrue, err
	})
	f.cli.run("stop", demoVM)
	f.goneWithPods(demoVM, vmi4.UID)

	// A deleted standalone instance: its pod goes too.
	vm := e.demoVM(kubevirtv1.RunStrategyManual)
	standalone := &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vmi-standalone", Namespace: e.ns},
		Spec:       vm.Spec.Template.Spec,
	}
	created, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, standalone, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, podS := f.running(standalone.Name, "")
	if out, err := e.c.Kubectl("delete", "vmi", "-n", e.ns, standalone.Name, "--wait=false"); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("$ kubectl delete vmi %s --wait=false\n%s", standalone.Name, out)
	}
	f.goneWithPods(standalone.Name, created.UID)
	if _, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, podS.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod %s of the deleted instance: %v, want NotFound", podS.Name, err)
	}
}

// killAgent kills the node agent process with SIGKILL while the guest of launcher pod runs and
// waits until the DaemonSet's container is back and the instance is still Running on the same
// QEMU process.
func (f *flow) killAgent(launcher *corev1.Pod) {
	f.t.Helper()
	ctx := context.Background()
	pods, err := f.kube.CoreV1().Pods("nativevirt").List(ctx, metav1.ListOptions{LabelSelector: handlerSelector, FieldSelector: "spec.nodeName=" + launcher.Spec.NodeName})
	if err != nil || len(pods.Items) != 1 {
		f.t.Fatalf("node agent pod on %s: %d pods, %v", launcher.Spec.NodeName, len(pods.Items), err)
	}
	agent := pods.Items[0]
	restarts := int32(0)
	for _, cs := range agent.Status.ContainerStatuses {
		restarts += cs.RestartCount
	}
	agentPIDs := podProcesses(agent.UID, "nativevirt-hand")
	qemuPIDs := podProcesses(launcher.UID, "qemu-system")
	if len(agentPIDs) != 1 || len(qemuPIDs) != 1 {
		f.dump()
		f.t.Fatalf("host processes: node agent %v, QEMU %v; want one each", agentPIDs, qemuPIDs)
	}
	qemuStart := framework.ProcStartTime(qemuPIDs[0])
	f.t.Logf("kill -9 %d (node agent of pod %s); QEMU of %s is PID %d", agentPIDs[0], agent.Name, launcher.Name, qemuPIDs[0])
	if err := syscall.Kill(agentPIDs[0], syscall.SIGKILL); err != nil {
		f.t.Fatal(err)
	}
	f.waitFor("the node agent's container restarted and ready", controllerTimeout, func() (bool, error) {
		p, err := f.kube.CoreV1().Pods("nativevirt").Get(ctx, agent.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		n := int32(0)
		ready := len(p.Status.ContainerStatuses) > 0
		for _, cs := range p.Status.ContainerStatuses {
			n += cs.RestartCount
			ready = ready && cs.Ready
		}
		return n > restarts && ready, fmt.Errorf("restarts %d, ready %t", n, ready)
	})
	f.waitFor("a new node agent process", controllerTimeout, func() (bool, error) {
		pids := podProcesses(agent.UID, "nativevirt-hand")
		return len(pids) == 1 && pids[0] != agentPIDs[0], fmt.Errorf("agent processes %v", pids)
	})
	if got := podProcesses(launcher.UID, "qemu-system"); len(got) != 1 || got[0] != qemuPIDs[0] || framework.ProcStartTime(got[0]) != qemuStart {
		f.dump()
		f.t.Fatalf("QEMU processes after the agent restart %v, want the same PID %d", got, qemuPIDs[0])
	}
	v, err := f.vmi(launcher.Annotations["kubevirt.io/domain"])
	if err != nil || v.Status.Phase != kubevirtv1.Running {
		f.dump()
		f.t.Fatalf("instance after the agent restart: %v (phase %v)", err, phaseOf(v))
	}
	f.t.Logf("node agent back (PID %d), QEMU still PID %d, instance %s", podProcesses(agent.UID, "nativevirt-hand")[0], qemuPIDs[0], v.Status.Phase)
}

func phaseOf(v *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachineInstancePhase {
	if v == nil {
		return ""
	}
	return v.Status.Phase
}

// podProcesses lists the host PIDs whose command name starts with comm and whose cgroup is
// that of the pod with uid (cgroupfs `pod<uid>` or systemd `pod<uid with _>`).
func podProcesses(uid types.UID, comm string) []int {
	dash := "pod" + string(uid)
	underscore := "pod" + strings.ReplaceAll(string(uid), "-", "_")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		name, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil || !strings.HasPrefix(strings.TrimSpace(string(name)), comm) {
			continue
		}
		cg, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err != nil {
			continue
		}
		if s := string(cg); strings.Contains(s, dash) || strings.Contains(s, underscore) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indentLines(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
