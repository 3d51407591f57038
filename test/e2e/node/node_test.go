// Package node tests the node agent against REAL libvirt and QEMU, without a
// cluster: the launcher runs as a process in its own mount and network
// namespaces that stand for the launcher pod (the `private` and `disks`
// directories are bind-mounted at the pod paths, libvirt's state directories
// are private tmpfs, eth0 is a veth whose peer is in a "node" namespace of
// the test), and the agent runs in-process on fake API clients with real
// informers; it prepares the pod network (masquerade) as in a cluster. The
// demo guest (hack/images/build-demo-disk.sh) boots under TCG.
//
// It needs root, libvirtd, QEMU and the demo disk; it skips with the reason
// otherwise. Run it with: go test -v ./test/e2e/node/
package node

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	kvfake "github.com/nativevirt/nativevirt/pkg/client/clientset/versioned/fake"
	kvinformers "github.com/nativevirt/nativevirt/pkg/client/informers/externalversions"
	"github.com/nativevirt/nativevirt/pkg/node/agent"
	"github.com/nativevirt/nativevirt/pkg/node/app"
	"github.com/nativevirt/nativevirt/pkg/node/domains"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

const (
	nodeName = "node-1"
	ns       = "default"
	vmiName  = "demo"
	vmiUID   = types.UID("0d3f5a4e-7b21-4c39-9a55-2f1e6c8b9d01")
	podUID   = types.UID("5e2a9c17-33b4-4d0e-8f61-7a9b0c1d2e3f")
	banner   = "NativeVirt demo guest ready"
	// userData is run by the demo guest's mini cloud-init; the shell
	// computes the marker so the script text itself does not contain it. It
	// also starts a web server in the guest for the network checks.
	userData = "#!/bin/sh\necho cloud-init-$((20+22))-ran\n" +
		"mkdir -p /run/www && echo guest-web-$((6*7)) >/run/www/index.html && httpd -p 8080 -h /run/www\n"
	userDataMarker = "cloud-init-42-ran"
	webMarker      = "guest-web-42"
	// The simulated pod network: the pod's eth0 and its peer in a "node"
	// network namespace of the test.
	podIP, nodeIP, podMTU = "10.249.0.2", "10.249.0.1", 1400
	// The pod's resolver, which the guest gets by DHCP.
	podResolvConf = "nameserver 10.96.0.10\nsearch default.svc.cluster.local\n"
)

// repoRoot is the module root (for the demo disk and the launcher's source).
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func prerequisites(t *testing.T, root string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (libvirtd, mount namespaces)")
	}
	for _, p := range []string{"/usr/sbin/libvirtd", "/usr/sbin/virtlogd", "/usr/bin/qemu-system-x86_64"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s missing (hack/deps/node.list): %v", p, err)
		}
	}
	// The node agent prepares the pod network with these.
	for _, tool := range []string{"ip", "nft", "nsenter", "sysctl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s missing (hack/deps/node.list): %v", tool, err)
		}
	}
	disk := filepath.Join(root, "_output/images/demo-disk/disk.img")
	if _, err := os.Stat(disk); err != nil {
		t.Skipf("demo disk missing (make image-demo-disk): %v", err)
	}
	return disk
}

// pod is one simulated launcher pod: directories under a kubelet root and
// the launcher process.
type pod struct {
	kubeletRoot, private, disks string
	nodeNS                      string // the named network namespace at the other end of the pod's eth0
	cmd                         *exec.Cmd
	exited                      chan error
	log                         *bytes.Buffer
}

// podScript sets up the launcher's view of the pod inside its mount
// namespace, then becomes the launcher.
const podScript = `set -e
# The launcher image has Debian's libvirt-qemu user; the host may not.
for f in passwd group; do cp /etc/$f "$1/../.$f"; done
grep -q '^libvirt-qemu:' /etc/passwd || echo 'libvirt-qemu:x:64055:64055::/var/lib/libvirt:/usr/sbin/nologin' >>"$1/../.passwd"
grep -q '^libvirt-qemu:' /etc/group || echo 'libvirt-qemu:x:64055:' >>"$1/../.group"
mount --bind "$1/../.passwd" /etc/passwd
mount --bind "$1/../.group" /etc/group
printf '%s' "$NV_RESOLV_CONF" >"$1/../.resolv.conf"
mount --bind "$1/../.resolv.conf" /etc/resolv.conf
for d in /etc/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt; do mkdir -p $d; mount -t tmpfs tmpfs $d; done
mount -t tmpfs tmpfs /run
mkdir -p /run/nativevirt /run/nativevirt-disks
mount --bind "$1" /run/nativevirt
mount --bind "$2" /run/nativevirt-disks
shift 2
exec "$@"
`

func startPod(t *testing.T, launcher, disk string) *pod {
	t.Helper()
	return startPodUID(t, launcher, disk, podUID, vmiName, vmiUID)
}

// startPodUID starts the launcher of VMI vmi (uid) as pod uid under a kubelet root of its own
// (a node of its own).
func startPodUID(t *testing.T, launcher, disk string, uid types.UID, vmi string, vmiUID types.UID) *pod {
	t.Helper()
	podUID := uid
	base, err := os.MkdirTemp("/tmp", "nvnode")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	loc := podfs.Locator{KubeletRoot: filepath.Join(base, "kubelet")}
	p := &pod{kubeletRoot: loc.KubeletRoot, private: loc.EmptyDir(podUID, podfs.PrivateVolume), disks: loc.EmptyDir(podUID, podfs.DisksVolume)}
	for _, d := range []string{p.private, filepath.Join(p.disks, "containerdisk")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// What the pod's copy container does: copy the containerDisk image.
	if out, err := exec.Command("cp", "--sparse=always", disk, filepath.Join(p.disks, "containerdisk", "disk.img")).CombinedOutput(); err != nil {
		t.Fatalf("copying the demo disk: %v: %s", err, out)
	}
	p.log = &bytes.Buffer{}
	p.cmd = exec.Command("/bin/sh", "-c", podScript, "pod", p.private, p.disks,
		launcher, "--namespace", ns, "--name", vmi, "--uid", string(vmiUID), "--grace-period-seconds", "5")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.Env = append(os.Environ(), "NV_RESOLV_CONF="+podResolvConf)
	// The pod's own mount and network namespaces.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.nodeNS = podNetwork(t, p.cmd.Process.Pid)
	p.exited = make(chan error, 1)
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(p.private, "serial.log"))
			t.Logf("serial log:\n%s", b)
		}
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(20 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
		if t.Failed() {
			t.Logf("launcher output:\n%s", p.log.String())
		}
	})
	waitFor(t, 90*time.Second, "the launcher's ready marker", func() bool {
		select {
		case err := <-p.exited:
			p.exited <- err
			t.Fatalf("launcher exited early: %v", err)
		default:
		}
		_, err := os.Stat(filepath.Join(p.private, podfs.ReadyMarker))
		return err == nil
	})
	return p
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			failf(t, true, "timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// failures holds each test's failure messages (*testing.T → *[]string) for repeatFailures.
var failures sync.Map

// failf fails t with the message (and stops it when fatal), and keeps the message for
// repeatFailures.
func failf(t *testing.T, fatal bool, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	v, _ := failures.LoadOrStore(t, &[]string{})
	notes := v.(*[]string)
	*notes = append(*notes, msg)
	if fatal {
		t.Fatal(msg)
	}
	t.Error(msg)
}

// repeatFailures repeats t's failure messages at the very end of its output, after the long
// dumps (launcher output, serial logs) of the cleanups registered later, where a summary of
// the output around "--- FAIL" shows them. Call it first in a test.
func repeatFailures(t *testing.T) {
	t.Cleanup(func() {
		if v, ok := failures.LoadAndDelete(t); ok && t.Failed() {
			t.Logf("the failures above, again:\n  %s", strings.Join(*v.(*[]string), "\n  "))
		}
	})
}

// world is the fake API and one running agent.
type world struct {
	kv     *kvfake.Clientset
	kube   *kubefake.Clientset
	state  string
	pod    *pod
	cancel context.CancelFunc
	done   chan struct{}
	agent  *agent.Agent
}

func (w *world) startAgent(t *testing.T) {
	t.Helper()
	store, err := domains.Open(w.state)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
	kvf := kvinformers.NewSharedInformerFactory(w.kv, 0)
	kf := kubeinformers.NewSharedInformerFactory(w.kube, 0)
	vmis := kvf.Kubevirt().V1().VirtualMachineInstances()
	pods := kf.Core().V1().Pods()
	a := agent.New(agent.Config{
		NodeName:     nodeName,
		Locator:      podfs.Locator{KubeletRoot: w.pod.kubeletRoot},
		Store:        store,
		Dial:         virt.Dial,
		BuildDomain:  app.BuildDomain(true),
		CloudInitISO: app.CloudInitISO,
		VMIs:         vmis.Lister(),
		Pods:         pods.Lister(),
		UpdateStatus: func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) error {
			_, err := w.kv.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, vmi, metav1.UpdateOptions{})
			return err
		},
		GetSecret: func(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
			return w.kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		CreateOverlay:  app.CreateOverlay,
		PrepareNetwork: app.PrepareNetwork,
	})
	if err := a.AddEventHandlers(vmis.Informer(), pods.Informer()); err != nil {
		t.Fatal(err)
	}
	kvf.Start(ctx.Done())
	kf.Start(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = a.Run(ctx, 2, vmis.Informer().HasSynced, pods.Informer().HasSynced)
	}()
	w.agent, w.cancel, w.done = a, cancel, done
}

func (w *world) stopAgent() {
	w.cancel()
	<-w.done
}

func (w *world) vmi(t *testing.T) *kubevirtv1.VirtualMachineInstance {
	t.Helper()
	v, err := w.kv.KubevirtV1().VirtualMachineInstances(ns).Get(context.Background(), vmiName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (w *world) condition(t *testing.T, ct kubevirtv1.VirtualMachineInstanceConditionType) corev1.ConditionStatus {
	for _, c := range w.vmi(t).Status.Conditions {
		if c.Type == ct {
			return c.Status
		}
	}
	return ""
}

func demoVMI() *kubevirtv1.VirtualMachineInstance {
	grace := int64(3)
	return &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: vmiName, UID: vmiUID},
		Spec: kubevirtv1.VirtualMachineInstanceSpec{
			TerminationGracePeriodSeconds: &grace,
			Domain: kubevirtv1.DomainSpec{
				CPU:    &kubevirtv1.CPU{Cores: 1},
				Memory: &kubevirtv1.Memory{Guest: resourcePtr("128Mi")},
				// Firmware UUID as the apiserver's defaulting sets it.
				Firmware: &kubevirtv1.Firmware{UUID: types.UID("5b3ee6a6-1d6b-5a4f-9c55-9c8f1b2a3c4e")},
				Devices: kubevirtv1.Devices{
					Disks: []kubevirtv1.Disk{
						{Name: "containerdisk", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "virtio"}}},
						{Name: "cloudinitdisk", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "virtio"}}},
					},
					Interfaces: []kubevirtv1.Interface{{Name: "default",
						InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}}}},
				},
			},
			Networks: []kubevirtv1.Network{{Name: "default", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}}},
			Volumes: []kubevirtv1.Volume{{Name: "containerdisk", VolumeSource: kubevirtv1.VolumeSource{
				ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: "localhost/nativevirt-demo-disk:dev"}}},
				{Name: "cloudinitdisk", VolumeSource: kubevirtv1.VolumeSource{
					CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{UserData: userData}}},
			},
		},
		Status: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduled, NodeName: nodeName},
	}
}

func resourcePtr(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// qemuPID finds the QEMU process of the demo domain.
func qemuPID(t *testing.T) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte("qemu-system")) && bytes.Contains(cmdline, []byte("guest="+ns+"_"+vmiName)) {
			return pid
		}
	}
	return 0
}

// readUntil reads r until want shows up, returning what was read.
func readUntil(t *testing.T, r io.Reader, want string, timeout time.Duration) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		var b strings.Builder
		br := bufio.NewReader(r)
		buf := make([]byte, 4096)
		for {
			n, err := br.Read(buf)
			b.Write(buf[:n])
			if strings.Contains(b.String(), want) || err != nil {
				got <- b.String()
				return
			}
		}
	}()
	select {
	case s := <-got:
		if !strings.Contains(s, want) {
			t.Fatalf("stream ended before %q; got %q", want, s)
		}
		return s
	case <-time.After(timeout):
		t.Fatalf("no %q within %v", want, timeout)
	}
	return ""
}

func TestNodeAgentOnRealLibvirt(t *testing.T) {
	repeatFailures(t)
	root := repoRoot(t)
	disk := prerequisites(t, root)
	launcher := filepath.Join(t.TempDir(), "nativevirt-launcher")
	build := exec.Command("go", "build", "-o", launcher, "./cmd/nativevirt-launcher")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the launcher: %v\n%s", err, out)
	}

	p := startPod(t, launcher, disk)
	// The guest starts paused (startStrategy Paused) and boots once unpaused.
	vmi := demoVMI()
	paused := kubevirtv1.StartStrategyPaused
	vmi.Spec.StartStrategy = &paused
	w := &world{
		kv: kvfake.NewSimpleClientset(vmi),
		kube: kubefake.NewClientset(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "virt-launcher-demo-x1y2z", UID: podUID,
				Labels: map[string]string{kubevirtv1.AppLabel: "virt-launcher", kubevirtv1.CreatedByLabel: string(vmiUID)}},
			Spec:   corev1.PodSpec{NodeName: nodeName},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: podIP, PodIPs: []corev1.PodIP{{IP: podIP}}},
		}),
		state: t.TempDir(),
		pod:   p,
	}
	w.startAgent(t)
	defer func() {
		if w.cancel != nil {
			w.stopAgent()
		}
	}()
	ctx := context.Background()

	t0 := time.Now()
	waitFor(t, 60*time.Second, "phase Running", func() bool { return w.vmi(t).Status.Phase == kubevirtv1.Running })
	t.Logf("Running after %v; interfaces %+v", time.Since(t0).Round(time.Millisecond), w.vmi(t).Status.Interfaces)
	if ifs := w.vmi(t).Status.Interfaces; len(ifs) != 1 || ifs[0].IP != podIP {
		t.Errorf("status.interfaces = %+v, want the pod IP %s on interface default", ifs, podIP)
	}
	waitFor(t, 20*time.Second, "the Paused condition of the paused start", func() bool {
		return w.condition(t, kubevirtv1.VirtualMachineInstancePaused) == corev1.ConditionTrue
	})
	// Paused vCPUs run nothing, not even the firmware: the serial log stays empty.
	time.Sleep(2 * time.Second)
	if b, _ := os.ReadFile(filepath.Join(p.private, "serial.log")); len(bytes.TrimSpace(b)) != 0 {
		t.Errorf("the guest of a paused start wrote to its serial port: %q", b)
	}
	if err := w.agent.Backend().Unpause(ctx, ns, vmiName, vmiUID); err != nil {
		t.Fatalf("unpausing the paused start: %v", err)
	}
	waitFor(t, 20*time.Second, "the Paused condition gone after the unpause", func() bool {
		return w.condition(t, kubevirtv1.VirtualMachineInstancePaused) == ""
	})
	t0 = time.Now()
	waitFor(t, 120*time.Second, "the banner in the serial log", func() bool {
		b, _ := os.ReadFile(filepath.Join(p.private, "serial.log"))
		return bytes.Contains(b, []byte(banner))
	})
	t.Logf("guest banner after %v", time.Since(t0).Round(time.Millisecond))
	waitFor(t, 30*time.Second, "the cloud-init user data's output in the serial log", func() bool {
		b, _ := os.ReadFile(filepath.Join(p.private, "serial.log"))
		return bytes.Contains(b, []byte(userDataMarker))
	})

	// Two console sessions share the console: input from one, output to both.
	s1, err := w.agent.Backend().Console(ctx, ns, vmiName, vmiUID)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := w.agent.Backend().Console(ctx, ns, vmiName, vmiUID)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	n := rand.IntN(1000000)
	// The shell computes the marker, so it cannot come from the echo of the typed line.
	if _, err := fmt.Fprintf(s1, "\necho hello-$((%d+1))\n", n); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("hello-%d", n+1)
	out1 := readUntil(t, s1, want, 60*time.Second)
	readUntil(t, s2, want, 10*time.Second)
	t.Logf("console transcript:\n%s", out1)
	checkGuestNetwork(t, p, s1)

	vnc, err := w.agent.Backend().VNC(ctx, ns, vmiName, vmiUID)
	if err != nil {
		t.Fatal(err)
	}
	hello := make([]byte, 12)
	_ = vnc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(vnc, hello); err != nil || !strings.HasPrefix(string(hello), "RFB 003.00") {
		t.Errorf("VNC banner %q, %v", hello, err)
	}
	vnc.Close()
	t.Logf("VNC banner %q", strings.TrimSpace(string(hello)))

	tp := time.Now()
	if err := w.agent.Backend().Pause(ctx, ns, vmiName, vmiUID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "Paused condition", func() bool { return w.condition(t, kubevirtv1.VirtualMachineInstancePaused) == corev1.ConditionTrue })
	t.Logf("Paused condition after %v", time.Since(tp).Round(time.Millisecond))
	tp = time.Now()
	if err := w.agent.Backend().Unpause(ctx, ns, vmiName, vmiUID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "Paused condition gone", func() bool { return w.condition(t, kubevirtv1.VirtualMachineInstancePaused) == "" })
	t.Logf("Paused condition removed after %v", time.Since(tp).Round(time.Millisecond))

	// The agent restarts: the guest keeps running, same QEMU process.
	pid := qemuPID(t)
	if pid == 0 {
		t.Fatal("no QEMU process found")
	}
	s1.Close()
	s2.Close()
	w.stopAgent()
	w.startAgent(t)
	time.Sleep(3 * time.Second)
	if got := qemuPID(t); got != pid {
		t.Errorf("QEMU pid %d after the agent restart, want %d", got, pid)
	}
	if got := w.vmi(t).Status.Phase; got != kubevirtv1.Running {
		t.Errorf("phase after the agent restart = %s, want Running", got)
	}
	s3, err := w.agent.Backend().Console(ctx, ns, vmiName, vmiUID)
	if err != nil {
		t.Fatalf("console after the agent restart: %v", err)
	}
	if _, err := fmt.Fprintf(s3, "echo again-$((%d+2))\n", n); err != nil {
		t.Fatal(err)
	}
	readUntil(t, s3, fmt.Sprintf("again-%d", n+2), 30*time.Second)
	s3.Close()
	// The pod network was not touched by the restart: the guest still serves.
	if body, err := httpGet(t, p.nodeNS, podIP+":8080"); err != nil || !strings.Contains(body, webMarker) {
		t.Errorf("the guest's web server after the agent restart: %q, %v", body, err)
	}

	// Deleting the VMI: ACPI shutdown, destroyed after the 3 s grace period
	// if the guest ignores it; the VMI ends Succeeded and the launcher exits 0.
	v := w.vmi(t)
	now := metav1.Now()
	v.DeletionTimestamp = &now
	if _, err := w.kv.KubevirtV1().VirtualMachineInstances(ns).Update(ctx, v, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "phase Succeeded", func() bool { return w.vmi(t).Status.Phase == kubevirtv1.Succeeded })
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("launcher exited with %v, want 0", err)
		}
		p.exited <- err
	case <-time.After(30 * time.Second):
		t.Error("launcher still running after its domain stopped")
	}
}
