package node

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	kvfake "github.com/nativevirt/nativevirt/pkg/client/clientset/versioned/fake"
	kvinformers "github.com/nativevirt/nativevirt/pkg/client/informers/externalversions"
	"github.com/nativevirt/nativevirt/pkg/node/agent"
	"github.com/nativevirt/nativevirt/pkg/node/app"
	"github.com/nativevirt/nativevirt/pkg/node/domains"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/streamserver"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
	"github.com/nativevirt/nativevirt/pkg/streams"
	"github.com/nativevirt/nativevirt/pkg/streams/streamstest"
	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

const (
	migVMIName    = "mover"
	migVMIUID     = types.UID("4f0c1a2b-9d8e-4c7b-8a6f-5e4d3c2b1a09")
	migUID        = types.UID("7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d")
	sourcePodUID  = types.UID("1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f")
	scratchMarker = "scratch-1234"
)

// counterUserData writes a marker to the emptyDisk (vdc) and starts a counter on the serial
// console with the guest's uptime.
var counterUserData = "#!/bin/sh\nprintf 'scratch-%s\\n' $((1000+234)) >/dev/vdc\nsync\n" +
	framework.CounterScript(500*time.Millisecond)

// migrationNode is one node of the test: a launcher pod under its own kubelet root and its
// node agent, whose stream endpoint serves the other agent's tunnels over mutual TLS.
type migrationNode struct {
	name, podName, podIP string
	podUID               types.UID
	pod                  *pod
	agent                *agent.Agent
	endpoint             string
	cancel               context.CancelFunc
	done                 chan struct{}
}

func migratingVMI() *kubevirtv1.VirtualMachineInstance {
	vmi := demoVMI()
	vmi.Name, vmi.UID = migVMIName, migVMIUID
	vmi.Spec.Domain.Memory.Guest = resourcePtr("256Mi")
	vmi.Spec.Domain.Devices.Disks = append(vmi.Spec.Domain.Devices.Disks,
		kubevirtv1.Disk{Name: "scratch", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "virtio"}}})
	vmi.Spec.Volumes[1].CloudInitNoCloud.UserData = counterUserData
	vmi.Spec.Volumes = append(vmi.Spec.Volumes, kubevirtv1.Volume{Name: "scratch", VolumeSource: kubevirtv1.VolumeSource{
		EmptyDisk: &kubevirtv1.EmptyDiskSource{Capacity: resource.MustParse("16Mi")}}})
	vmi.Status.NodeName = "node-a"
	return vmi
}

func launcherPodObject(n *migrationNode, extra map[string]string) *corev1.Pod {
	labels := map[string]string{kubevirtv1.AppLabel: "virt-launcher", kubevirtv1.CreatedByLabel: string(migVMIUID)}
	for k, v := range extra {
		labels[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n.podName, UID: n.podUID, Labels: labels},
		Spec:       corev1.PodSpec{NodeName: n.name},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: n.podIP, PodIPs: []corev1.PodIP{{IP: n.podIP}}},
	}
}

// enforceResourceVersions makes the fake clientset refuse stale VMI updates with a conflict,
// as the apiserver does: two agents and the test write the same VMI.
func enforceResourceVersions(kv *kvfake.Clientset) {
	gvr := kubevirtv1.SchemeGroupVersion.WithResource("virtualmachineinstances")
	kv.PrependReactor("update", "virtualmachineinstances", func(action clienttesting.Action) (bool, runtime.Object, error) {
		obj := action.(clienttesting.UpdateAction).GetObject().(*kubevirtv1.VirtualMachineInstance)
		cur, err := kv.Tracker().Get(gvr, obj.Namespace, obj.Name)
		if err != nil || obj.ResourceVersion == "" {
			return false, nil, nil
		}
		if cur.(*kubevirtv1.VirtualMachineInstance).ResourceVersion != obj.ResourceVersion {
			return true, nil, apierrors.NewConflict(gvr.GroupResource(), obj.Name, fmt.Errorf("stale resourceVersion %s", obj.ResourceVersion))
		}
		return false, nil, nil
	})
}

func startMigrationAgent(t *testing.T, n *migrationNode, kv *kvfake.Clientset, kube *kubefake.Clientset, ca *streamstest.CA, bandwidthMiB uint64) {
	t.Helper()
	pair, err := ca.AgentCert(streams.HandlerCommonName, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srvCfg, err := streams.ServerTLSConfig(ca.CertPEM, pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	clientCfg, err := streams.ClientTLSConfig(ca.CertPEM, pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	var handler http.Handler
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	srv.TLS = srvCfg
	srv.StartTLS()
	t.Cleanup(srv.Close)
	n.endpoint = srv.Listener.Addr().String()

	store, err := domains.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logger := klog.Background().WithValues("node", n.name)
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	kvf := kvinformers.NewSharedInformerFactory(kv, 0)
	kf := kubeinformers.NewSharedInformerFactory(kube, 0)
	vmis := kvf.Kubevirt().V1().VirtualMachineInstances()
	pods := kf.Core().V1().Pods()
	a := agent.New(agent.Config{
		NodeName:     n.name,
		Locator:      podfs.Locator{KubeletRoot: n.pod.kubeletRoot},
		Store:        store,
		Dial:         virt.Dial,
		BuildDomain:  app.BuildDomain(true),
		CloudInitISO: app.CloudInitISO,
		VMIs:         vmis.Lister(),
		Pods:         pods.Lister(),
		UpdateStatus: func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) error {
			_, err := kv.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, vmi, metav1.UpdateOptions{})
			return err
		},
		GetSecret: func(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
			return kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		CreateOverlay:  app.CreateOverlay,
		PrepareNetwork: app.PrepareNetwork,
		// The fake API serves no label selector per node: one informer for both roles (the
		// agent tells them apart by the VMI's status).
		TargetVMIs: vmis.Lister(),
		Migration: agent.MigrationConfig{
			Endpoint: n.endpoint,
			DialTunnel: func(ctx context.Context, endpoint string, mt streams.MigrationTarget) (net.Conn, error) {
				return streams.DialTunnel(ctx, endpoint, clientCfg, mt)
			},
			BandwidthMiB: bandwidthMiB,
		},
	})
	handler = streamserver.Handler(a.Backend())
	if err := a.AddEventHandlers(vmis.Informer(), pods.Informer()); err != nil {
		t.Fatal(err)
	}
	kvf.Start(ctx.Done())
	kf.Start(ctx.Done())
	n.agent, n.cancel, n.done = a, cancel, make(chan struct{})
	go func() {
		defer close(n.done)
		_ = a.Run(ctx, 2, vmis.Informer().HasSynced, pods.Informer().HasSynced)
	}()
	t.Cleanup(func() {
		n.cancel()
		<-n.done
	})
}

// ticks are the counter lines of a serial log.
func ticks(t *testing.T, p *pod) []framework.Tick {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(p.private, "serial.log"))
	return framework.ParseTicks(data)
}

// updateVMI plays the controller and the apiserver's label mirroring: it changes the VMI,
// retrying on conflicts with the agents' writes.
func updateVMI(t *testing.T, kv *kvfake.Clientset, fn func(*kubevirtv1.VirtualMachineInstance)) {
	t.Helper()
	for i := 0; ; i++ {
		v, err := kv.KubevirtV1().VirtualMachineInstances(ns).Get(context.Background(), migVMIName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fn(v)
		_, err = kv.KubevirtV1().VirtualMachineInstances(ns).Update(context.Background(), v, metav1.UpdateOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || i > 50 {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// migrationWorld is the fake API shared by the nodes, the node CA and the built launcher.
type migrationWorld struct {
	t              *testing.T
	launcher, disk string
	kv             *kvfake.Clientset
	kube           *kubefake.Clientset
	ca             *streamstest.CA
	src            *migrationNode
	bandwidthMiB   uint64
	nextNode       int
}

// newMigrationWorld builds the launcher, starts the source pod and agent, and waits until the
// guest counts on its console.
func newMigrationWorld(t *testing.T, bandwidthMiB uint64) *migrationWorld {
	t.Helper()
	repeatFailures(t)
	root := repoRoot(t)
	disk := prerequisites(t, root)
	launcher := filepath.Join(t.TempDir(), "nativevirt-launcher")
	build := exec.Command("go", "build", "-o", launcher, "./cmd/nativevirt-launcher")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the launcher: %v\n%s", err, out)
	}
	ca, err := streamstest.NewCA("nativevirt node CA")
	if err != nil {
		t.Fatal(err)
	}
	w := &migrationWorld{t: t, launcher: launcher, disk: disk, ca: ca, bandwidthMiB: bandwidthMiB,
		kv: kvfake.NewSimpleClientset(migratingVMI())}
	enforceResourceVersions(w.kv)
	w.src = &migrationNode{name: "node-a", podName: "virt-launcher-mover-aaaaa", podIP: "10.244.0.9", podUID: sourcePodUID}
	w.src.pod = startPodUID(t, launcher, disk, w.src.podUID, migVMIName, migVMIUID)
	w.kube = kubefake.NewClientset(launcherPodObject(w.src, nil))
	startMigrationAgent(t, w.src, w.kv, w.kube, ca, bandwidthMiB)

	t0 := time.Now()
	waitFor(t, 90*time.Second, "phase Running on the source", func() bool { return w.get().Status.Phase == kubevirtv1.Running })
	waitFor(t, 180*time.Second, "the guest's counter on the source", func() bool { return len(ticks(t, w.src.pod)) >= 4 })
	t.Logf("guest counting on the source after %v", time.Since(t0).Round(time.Millisecond))
	if c := w.get().Status.Conditions; !hasCondition(c, kubevirtv1.VirtualMachineInstanceIsMigratable, corev1.ConditionTrue) {
		t.Fatalf("LiveMigratable is not True: %+v", c)
	}
	return w
}

func (w *migrationWorld) get() *kubevirtv1.VirtualMachineInstance {
	w.t.Helper()
	v, err := w.kv.KubevirtV1().VirtualMachineInstances(ns).Get(context.Background(), migVMIName, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return v
}

// migrate plays the controller: a target pod on a new node with its agent, then the
// migration state (and the apiserver's label for the target node). It returns the target
// node once the transfer started.
func (w *migrationWorld) migrate(uid types.UID) *migrationNode {
	t := w.t
	t.Helper()
	w.nextNode++
	dst := &migrationNode{
		name:    fmt.Sprintf("node-%c", 'a'+w.nextNode),
		podName: fmt.Sprintf("virt-launcher-mover-target%d", w.nextNode),
		podIP:   fmt.Sprintf("10.244.%d.9", w.nextNode),
		podUID:  types.UID(fmt.Sprintf("2d3e4f5a-6b7c-4d8e-9fa0-1b2c3d4e5f%02d", w.nextNode)),
	}
	dst.pod = startPodUID(t, w.launcher, w.disk, dst.podUID, migVMIName, migVMIUID)
	if _, err := w.kube.CoreV1().Pods(ns).Create(context.Background(), launcherPodObject(dst, map[string]string{kubevirtv1.MigrationJobLabel: string(uid)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	startMigrationAgent(t, dst, w.kv, w.kube, w.ca, w.bandwidthMiB)
	updateVMI(t, w.kv, func(v *kubevirtv1.VirtualMachineInstance) {
		v.Labels = map[string]string{kubevirtv1.MigrationTargetNodeNameLabel: dst.name}
		v.Status.MigrationState = &kubevirtv1.VirtualMachineInstanceMigrationState{
			MigrationUID: uid, Mode: kubevirtv1.MigrationPreCopy,
			SourceNode: w.src.name, SourcePod: w.src.podName, TargetNode: dst.name, TargetPod: dst.podName,
		}
	})
	waitFor(t, 60*time.Second, "the target's address", func() bool { return w.get().Status.MigrationState.TargetNodeAddress != "" })
	if got := w.get().Status.MigrationState.TargetNodeAddress; got != dst.endpoint {
		t.Errorf("targetNodeAddress %q, want the target agent's endpoint %q", got, dst.endpoint)
	}
	waitFor(t, 60*time.Second, "the transfer's start", func() bool { return w.get().Status.MigrationState.StartTimestamp != nil })
	return dst
}

// TestLiveMigrationOnRealLibvirt moves the demo guest (256 MiB, TCG) between two launcher
// "pods" of two "nodes", through the two node agents' migration tunnels (unix sockets in each
// pod's private directory, mutual TLS between the agents): the guest's counter and uptime go
// on, its emptyDisk content arrives, the console answers through the target's agent, the
// source domain is gone and the source launcher exits.
func TestLiveMigrationOnRealLibvirt(t *testing.T) {
	w := newMigrationWorld(t, 0)
	src, kv, ctx, get := w.src, w.kv, context.Background(), w.get
	before := ticks(t, src.pod)
	lastBefore := before[len(before)-1]
	tm := time.Now()
	dst := w.migrate(migUID)
	waitFor(t, 300*time.Second, "the migration to complete", func() bool { return get().Status.MigrationState.Completed })
	took := time.Since(tm)
	ms := get().Status.MigrationState
	if ms.Failed || !ms.TargetNodeDomainDetected || ms.TargetNodeDomainReadyTimestamp == nil || ms.EndTimestamp == nil {
		t.Fatalf("migration state %+v, want completed, not failed, detected on the target", ms)
	}

	// libvirt's account of the transfer, as the target daemon kept it.
	dprivate, err := podfs.Open(dst.pod.private)
	if err != nil {
		t.Fatal(err)
	}
	defer dprivate.Close()
	dconn, err := virt.Dial(dprivate.Path(podfs.LibvirtSocket))
	if err != nil {
		t.Fatal(err)
	}
	defer dconn.Close()
	js, err := dconn.JobStats(ns+"_"+migVMIName, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("MIGRATION of a 256 MiB guest (TCG): %v from the migration state to completed (startTimestamp→endTimestamp %v); "+
		"libvirt: elapsed %v, downtime %v, %d MiB of memory transferred in %d iterations (the disks' block copy comes before it)",
		took.Round(time.Millisecond), ms.EndTimestamp.Sub(ms.StartTimestamp.Time), js.Elapsed, js.Downtime,
		js.MemoryProcessed>>20, js.Iterations)
	if !js.Active {
		t.Error("the target daemon has no completed migration job to report")
	}

	// The source: domain gone, launcher exited by itself.
	select {
	case err := <-src.pod.exited:
		if err != nil {
			t.Errorf("source launcher exited with %v, want 0", err)
		}
		src.pod.exited <- err
	case <-time.After(60 * time.Second):
		t.Error("the source launcher still runs after its domain left")
	}

	// The controller's handover.
	updateVMI(t, kv, func(v *kubevirtv1.VirtualMachineInstance) {
		v.Status.NodeName = dst.name
		delete(v.Labels, kubevirtv1.MigrationTargetNodeNameLabel)
	})
	waitFor(t, 60*time.Second, "the target agent's status", func() bool {
		st := get().Status
		return st.Phase == kubevirtv1.Running && len(st.Interfaces) == 1 && st.Interfaces[0].IP == dst.podIP
	})

	// The guest went on counting: no reboot, uptime and counter continue.
	waitFor(t, 60*time.Second, "the counter on the target", func() bool { return len(ticks(t, dst.pod)) >= 3 })
	after := ticks(t, dst.pod)
	first := after[0]
	t.Logf("counter: last on the source before the migration tick %d (uptime %.2f s); first on the target tick %d (uptime %.2f s)",
		lastBefore.N, lastBefore.Uptime, first.N, first.Uptime)
	if first.N <= lastBefore.N || first.Uptime <= lastBefore.Uptime {
		t.Errorf("the counter restarted: first on the target %v, last before the migration %v", first, lastBefore)
	}
	for i := 1; i < len(after); i++ {
		if after[i].N != after[i-1].N+1 {
			t.Errorf("counter jumps on the target: %v", after)
			break
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dst.pod.private, "serial.log")); bytes.Contains(b, []byte(banner)) {
		t.Error("the guest booted again on the target")
	}
	// The emptyDisk's content came along (block migration through the nbd channel).
	scratch, err := os.ReadFile(filepath.Join(dst.pod.disks, "scratch", "disk.img"))
	if err != nil || !bytes.HasPrefix(scratch, []byte(scratchMarker)) {
		t.Errorf("the target's emptyDisk starts with %q (%v), want %q", scratch[:min(len(scratch), 16)], err, scratchMarker)
	}

	// The console answers through the target's agent.
	s, err := dst.agent.Backend().Console(ctx, ns, migVMIName, migVMIUID)
	if err != nil {
		t.Fatalf("console on the target: %v", err)
	}
	defer s.Close()
	n := time.Now().Nanosecond() % 100000
	if _, err := fmt.Fprintf(s, "\necho moved-$((%d+1)) $(head -c 12 /dev/vdc)\n", n); err != nil {
		t.Fatal(err)
	}
	out := readUntil(t, s, fmt.Sprintf("moved-%d %s", n+1, scratchMarker), 60*time.Second)
	t.Logf("console on the target:\n%s", out)
	if _, err := src.agent.Backend().Console(ctx, ns, migVMIName, migVMIUID); err == nil {
		t.Error("the source agent still serves the console")
	}

	// Stopping the VMI now happens on the target.
	s.Close()
	updateVMI(t, kv, func(v *kubevirtv1.VirtualMachineInstance) {
		now := metav1.Now()
		v.DeletionTimestamp = &now
	})
	waitFor(t, 60*time.Second, "phase Succeeded", func() bool { return get().Status.Phase == kubevirtv1.Succeeded })
	select {
	case err := <-dst.pod.exited:
		if err != nil {
			t.Errorf("target launcher exited with %v, want 0", err)
		}
		dst.pod.exited <- err
	case <-time.After(60 * time.Second):
		t.Error("the target launcher still runs after its domain stopped")
	}
}

// TestMigrationFailuresKeepTheGuestOnTheSource: with the transfer slowed down (2 MiB/s), an
// abort request and then the loss of the target launcher (all its processes killed) mid-way
// end the migration failed, and the guest keeps running on the source without a restart.
func TestMigrationFailuresKeepTheGuestOnTheSource(t *testing.T) {
	w := newMigrationWorld(t, 2)
	for _, tc := range []struct {
		name string
		uid  types.UID
		// interrupt breaks the running transfer to dst.
		interrupt func(dst *migrationNode)
		// wantAbort is the abortStatus the source must answer.
		wantAbort kubevirtv1.MigrationAbortStatus
	}{{
		name: "abort requested",
		uid:  "5b6c7d8e-0000-4000-8000-000000000001",
		interrupt: func(*migrationNode) {
			updateVMI(t, w.kv, func(v *kubevirtv1.VirtualMachineInstance) { v.Status.MigrationState.AbortRequested = true })
		},
		wantAbort: kubevirtv1.MigrationAbortSucceeded,
	}, {
		name:      "target launcher killed",
		uid:       "5b6c7d8e-0000-4000-8000-000000000002",
		interrupt: func(dst *migrationNode) { killPod(t, dst.pod) },
	}} {
		dst := w.migrate(tc.uid)
		// Let the transfer get going (about 90 MiB at 2 MiB/s) before breaking it.
		time.Sleep(3 * time.Second)
		if ms := w.get().Status.MigrationState; ms.Completed {
			failf(t, true, "%s: the slowed-down migration completed before it could be interrupted: %+v", tc.name, ms)
		}
		ti := time.Now()
		tc.interrupt(dst)
		waitFor(t, 120*time.Second, tc.name+": the migration to end", func() bool { return w.get().Status.MigrationState.Completed })
		ms := w.get().Status.MigrationState
		t.Logf("%s: ended %v after the interruption: failed=%v abortStatus=%q reason %q", tc.name,
			time.Since(ti).Round(time.Millisecond), ms.Failed, ms.AbortStatus, ms.FailureReason)
		if !ms.Failed || ms.FailureReason == "" || ms.AbortStatus != tc.wantAbort || ms.TargetNodeDomainDetected {
			failf(t, false, "%s: migration state %+v, want failed with a reason, abortStatus %q, never detected on the target", tc.name, ms, tc.wantAbort)
		}
		// The guest runs on, on the source, and nothing of it runs on the target.
		n := len(ticks(t, w.src.pod))
		waitFor(t, 60*time.Second, tc.name+": the counter going on at the source", func() bool { return len(ticks(t, w.src.pod)) >= n+3 })
		all := ticks(t, w.src.pod)
		for i := 1; i < len(all); i++ {
			if all[i].N != all[i-1].N+1 || all[i].Uptime < all[i-1].Uptime {
				failf(t, true, "%s: the counter restarted or jumped on the source: %v", tc.name, all[i-1:i+1])
			}
		}
		if st := w.get().Status; st.NodeName != w.src.name || st.Phase != kubevirtv1.Running {
			failf(t, false, "%s: node %s phase %s, want Running on %s", tc.name, st.NodeName, st.Phase, w.src.name)
		}
		waitFor(t, 60*time.Second, tc.name+": the target launcher to end", func() bool {
			select {
			case err := <-dst.pod.exited:
				dst.pod.exited <- err
				return true
			default:
				return false
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(w.src.pod.private, "serial.log")); bytes.Count(b, []byte(banner)) != 1 {
		failf(t, false, "the guest booted more than once on the source")
	}
}

// killPod kills every process of a launcher "pod" at once, as a node losing the pod would:
// the launcher and all its descendants (libvirtd, virtlogd and QEMU, which libvirt puts into a
// mount namespace of its own).
func killPod(t *testing.T, p *pod) {
	t.Helper()
	pids := []int{p.cmd.Process.Pid}
	for i := 0; i < len(pids); i++ {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pids[i]))
		for _, task := range tasks {
			data, _ := os.ReadFile(task)
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Logf("killed the %d processes of the target launcher pod", len(pids))
}

func hasCondition(cs []kubevirtv1.VirtualMachineInstanceCondition, t kubevirtv1.VirtualMachineInstanceConditionType, s corev1.ConditionStatus) bool {
	for _, c := range cs {
		if c.Type == t && c.Status == s {
			return true
		}
	}
	return false
}
