package agent

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	listers "github.com/nativevirt/nativevirt/pkg/client/listers/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/domains"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/virt/fake"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

const (
	// targetEndpoint is the stream endpoint of this node's agent.
	targetEndpoint = "10.0.0.1:8186"
	// confirmTimeout is the agents' wait for the target's report (fake clock).
	confirmTimeout = time.Minute
	node           = "node-1"
	ns             = "default"
	vmName         = "vm"
	vmUID          = types.UID("11111111-2222-3333-4444-555555555555")
	podUID         = types.UID("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
	key            = ns + "/" + vmName
)

// env is one node agent with a fake cluster, a fake libvirt and a real
// kubelet-like directory tree under a temporary root.
type env struct {
	t        *testing.T
	root     string
	stateDir string
	daemon   *fake.Daemon
	vmis     cache.Indexer
	pods     cache.Indexer
	secrets  map[string]*corev1.Secret
	now      time.Time
	// timers runs the agents' timers; tests step it.
	timers *testingclock.FakeClock
	agent  *Agent

	mu       sync.Mutex
	writes   []kubevirtv1.VirtualMachineInstanceStatus
	isos     []isoCall
	overlays []string
	tunnels  []streams.MigrationTarget
	events   []string
	// tunnelErr fails DialTunnel when set.
	tunnelErr error
}

type isoCall struct {
	kind               CloudInitKind
	user, vmi, network string
	keys               map[string]string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{
		t: t, root: t.TempDir(), stateDir: t.TempDir(), daemon: fake.NewDaemon(),
		vmis:    cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
		pods:    cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
		secrets: map[string]*corev1.Secret{},
		now:     time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
	}
	e.timers = testingclock.NewFakeClock(e.now)
	e.agent = e.newAgent()
	return e
}

// newAgent builds an agent on the env's state; a second call stands for a
// restarted agent process.
func (e *env) newAgent() *Agent {
	store, err := domains.Open(e.stateDir)
	if err != nil {
		e.t.Fatal(err)
	}
	a := New(Config{
		NodeName: node,
		Locator:  podfs.Locator{KubeletRoot: e.root},
		Store:    store,
		Dial:     e.daemon.Dial,
		BuildDomain: func(vmi *kubevirtv1.VirtualMachineInstance, facts DomainFacts) (string, []byte, error) {
			name := convert.DomainName(vmi.Namespace, vmi.Name)
			return name, []byte(fmt.Sprintf(`<domain type="qemu"><name>%s</name><metadata><nv:vmi xmlns:nv="urn:nv"><nv:uid>%s</nv:uid></nv:vmi></metadata></domain>`, name, vmi.UID)), nil
		},
		CloudInitISO: func(kind CloudInitKind, vmi *kubevirtv1.VirtualMachineInstance, data CloudInitData) ([]byte, error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.isos = append(e.isos, isoCall{kind, string(data.UserData), vmi.Name, string(data.NetworkData), data.PublicKeys})
			return []byte("ISO:" + string(data.UserData)), nil
		},
		Event: func(vmi *kubevirtv1.VirtualMachineInstance, eventType, reason, message string) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.events = append(e.events, vmi.Name+" "+eventType+" "+reason+": "+message)
		},
		VMIs: listers.NewVirtualMachineInstanceLister(e.vmis),
		Pods: corelisters.NewPodLister(e.pods),
		UpdateStatus: func(_ context.Context, vmi *kubevirtv1.VirtualMachineInstance) error {
			e.mu.Lock()
			e.writes = append(e.writes, vmi.Status)
			e.mu.Unlock()
			return e.vmis.Update(vmi)
		},
		GetSecret: func(_ context.Context, namespace, name string) (*corev1.Secret, error) {
			if s, ok := e.secrets[namespace+"/"+name]; ok {
				return s, nil
			}
			return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
		},
		CreateOverlay: func(overlay, backing, format string) error {
			e.mu.Lock()
			e.overlays = append(e.overlays, filepath.Base(overlay)+" over "+filepath.Base(backing)+" ("+format+")")
			e.mu.Unlock()
			return os.WriteFile(overlay, []byte("QFI\xfboverlay of "+filepath.Base(backing)), 0o644)
		},
		TargetVMIs: listers.NewVirtualMachineInstanceLister(e.vmis),
		Migration: MigrationConfig{
			Endpoint: targetEndpoint,
			DialTunnel: func(_ context.Context, endpoint string, t streams.MigrationTarget) (net.Conn, error) {
				e.mu.Lock()
				defer e.mu.Unlock()
				if endpoint != targetEndpoint {
					return nil, fmt.Errorf("tunnel to %s, want %s", endpoint, targetEndpoint)
				}
				e.tunnels = append(e.tunnels, t)
				if e.tunnelErr != nil {
					return nil, e.tunnelErr
				}
				// The "target launcher" echoes.
				a, b := net.Pipe()
				go func() { _, _ = io.Copy(b, b); _ = b.Close() }()
				return a, nil
			},
			ConfirmTimeout: confirmTimeout,
			Poll:           10 * time.Millisecond,
		},
		Timers: e.timers,
		Now: func() time.Time {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.now
		},
	})
	e.t.Cleanup(func() {
		a.launchers.closeAll()
		a.queue.ShutDown()
	})
	return a
}

// vmi returns a Scheduled VMI on this node.
func scheduledVMI() *kubevirtv1.VirtualMachineInstance {
	return &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: vmName, UID: vmUID},
		Spec: kubevirtv1.VirtualMachineInstanceSpec{
			Domain: kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{Interfaces: []kubevirtv1.Interface{{
				Name: "default", MacAddress: "02:00:00:00:00:01",
				InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}},
			}}}},
			Networks: []kubevirtv1.Network{{Name: "default", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}}},
		},
		Status: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduled, NodeName: node},
	}
}

func (e *env) addVMI(vmi *kubevirtv1.VirtualMachineInstance) {
	e.t.Helper()
	if err := e.vmis.Add(vmi); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) getVMI() *kubevirtv1.VirtualMachineInstance {
	e.t.Helper()
	obj, ok, err := e.vmis.GetByKey(key)
	if err != nil || !ok {
		e.t.Fatalf("VMI %s: %v %v", key, ok, err)
	}
	return obj.(*kubevirtv1.VirtualMachineInstance)
}

func (e *env) updateVMI(fn func(*kubevirtv1.VirtualMachineInstance)) {
	e.t.Helper()
	v := e.getVMI().DeepCopy()
	fn(v)
	if err := e.vmis.Update(v); err != nil {
		e.t.Fatal(err)
	}
}

// addLauncher adds the running launcher pod and its volumes; ready writes
// the launcher's ready marker.
func (e *env) addLauncher(ready bool) {
	e.t.Helper()
	e.addPod("virt-launcher-vm-abcde", podUID, "10.244.0.7", ready)
}

// addPod adds a running launcher pod of the VMI on this node and its volumes.
func (e *env) addPod(name string, uid types.UID, ip string, ready bool) *corev1.Pod {
	e.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, UID: uid,
			Labels: map[string]string{kubevirtv1.AppLabel: "virt-launcher", kubevirtv1.CreatedByLabel: string(vmUID)},
		},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}},
	}
	if err := e.pods.Add(pod); err != nil {
		e.t.Fatal(err)
	}
	loc := podfs.Locator{KubeletRoot: e.root}
	for _, v := range []string{podfs.PrivateVolume, podfs.DisksVolume} {
		if err := os.MkdirAll(loc.EmptyDir(uid, v), 0o755); err != nil {
			e.t.Fatal(err)
		}
	}
	if ready {
		e.markPodReady(uid)
	}
	return pod
}

func (e *env) markReady() {
	e.t.Helper()
	e.markPodReady(podUID)
}

func (e *env) markPodReady(uid types.UID) {
	e.t.Helper()
	p := filepath.Join(podfs.Locator{KubeletRoot: e.root}.EmptyDir(uid, podfs.PrivateVolume), podfs.ReadyMarker)
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// sync runs one reconcile of the VMI.
func (e *env) sync() time.Duration {
	e.t.Helper()
	after, err := e.agent.instances.sync(context.Background(), key)
	if err != nil {
		e.t.Fatalf("sync: %v", err)
	}
	return after
}

// recorded returns the events recorded so far ("<vmi> <type> <reason>: <message>") and forgets them.
func (e *env) recorded() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.events
	e.events = nil
	return out
}

func (e *env) writeCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.writes)
}

func (e *env) condition(t kubevirtv1.VirtualMachineInstanceConditionType) *kubevirtv1.VirtualMachineInstanceCondition {
	for _, c := range e.getVMI().Status.Conditions {
		if c.Type == t {
			c := c
			return &c
		}
	}
	return nil
}

// captureFacts makes the agent's BuildDomain record the facts of its last call.
func (e *env) captureFacts() *DomainFacts {
	facts := &DomainFacts{}
	build := e.agent.instances.buildDomain
	e.agent.instances.buildDomain = func(v *kubevirtv1.VirtualMachineInstance, f DomainFacts) (string, []byte, error) {
		*facts = f
		return build(v, f)
	}
	return facts
}

// waitClosed waits until the attachment l is closed (nil: there is none).
func (e *env) waitClosed(l *launcher) {
	e.t.Helper()
	if l == nil {
		return
	}
	select {
	case <-l.closed:
	case <-time.After(10 * time.Second):
		e.t.Fatal("the launcher attachment was not closed")
	}
}
