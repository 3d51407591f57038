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

package faults

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// outOfServiceTaint is Kubernetes' word that a node is shut down (non-graceful node shutdown):
// its pods are deleted at once, so that what they ran may start elsewhere.
var outOfServiceTaint = corev1.Taint{Key: "node.kubernetes.io/out-of-service", Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}

// lossTimeout bounds each step of the node loss: the heartbeat alone takes 120 s to go stale.
const lossTimeout = 5 * time.Minute

// timeline records, from watches, when each instance failed (and why), whether its launcher pod
// was still in the API then, and when each launcher pod left the API.
type timeline struct {
	mu     sync.Mutex
	failed map[types.UID]time.Time
	reason map[types.UID]string
	// podAtFailure says, for an instance seen Failed, what a read of the API right then found of
	// its launcher pods that could still run: "" when none.
	podAtFailure map[types.UID]string
	podDeleted   map[types.UID]time.Time // by instance UID
	stop         context.CancelFunc
	done         sync.WaitGroup
}

func (e *env) watchTimeline() *timeline {
	ctx, cancel := context.WithCancel(context.Background())
	tl := &timeline{failed: map[types.UID]time.Time{}, reason: map[types.UID]string{},
		podAtFailure: map[types.UID]string{}, podDeleted: map[types.UID]time.Time{}, stop: cancel}
	follow := func(open func(context.Context) (watch.Interface, error), handle func(watch.Event)) {
		tl.done.Add(1)
		go func() {
			defer tl.done.Done()
			for ctx.Err() == nil {
				w, err := open(ctx)
				if err != nil {
					time.Sleep(time.Second)
					continue
				}
				for ev := range w.ResultChan() {
					handle(ev)
				}
				w.Stop()
			}
		}()
	}
	follow(func(ctx context.Context) (watch.Interface, error) {
		return e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Watch(ctx, metav1.ListOptions{})
	}, func(ev watch.Event) {
		vmi, ok := ev.Object.(*kubevirtv1.VirtualMachineInstance)
		if !ok || vmi.Status.Phase != kubevirtv1.Failed {
			return
		}
		tl.mu.Lock()
		_, seen := tl.failed[vmi.UID]
		if !seen {
			tl.failed[vmi.UID], tl.reason[vmi.UID] = time.Now(), vmi.Status.Reason
		}
		tl.mu.Unlock()
		if seen {
			return
		}
		// The controller fails an instance once its informer saw the pod unable to run: gone
		// from the API or in a final phase (pod GC marks a pod Failed before deleting it). A
		// read of the API after the instance failed finds no pod that could still run. (The two
		// watches' own times are no order: each stream delivers at its own pace.)
		pods, err := e.kube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: kubevirtv1.CreatedByLabel + "=" + string(vmi.UID)})
		found := ""
		if err != nil {
			found = "unknown: " + err.Error()
		} else {
			for _, p := range pods.Items {
				if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
					found = fmt.Sprintf("pod %s (phase %s, deleting %t)", p.Name, p.Status.Phase, p.DeletionTimestamp != nil)
				}
			}
		}
		tl.mu.Lock()
		tl.podAtFailure[vmi.UID] = found
		tl.mu.Unlock()
	})
	follow(func(ctx context.Context) (watch.Interface, error) {
		return e.kube.CoreV1().Pods(e.ns).Watch(ctx, metav1.ListOptions{LabelSelector: kubevirtv1.CreatedByLabel})
	}, func(ev watch.Event) {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type != watch.Deleted {
			return
		}
		tl.mu.Lock()
		uid := types.UID(pod.Labels[kubevirtv1.CreatedByLabel])
		if _, seen := tl.podDeleted[uid]; !seen {
			tl.podDeleted[uid] = time.Now()
		}
		tl.mu.Unlock()
	})
	return tl
}

func (tl *timeline) close() {
	tl.stop()
	tl.done.Wait()
}

func (tl *timeline) failure(uid types.UID) (time.Time, string, bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	at, ok := tl.failed[uid]
	return at, tl.reason[uid], ok
}

// podLeftAtFailure says which launcher pod of the instance that could still run the API held
// when the instance was seen Failed ("" when none), and whether that read was done yet.
func (tl *timeline) podLeftAtFailure(uid types.UID) (string, bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	found, ok := tl.podAtFailure[uid]
	return found, ok
}

func (tl *timeline) podGone(uid types.UID) (time.Time, bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	at, ok := tl.podDeleted[uid]
	return at, ok
}

// TestNodeLoss takes one node of two away: its kubelet and node agent stop (kill -9), later the
// node's pods die as in a power cut and the operator declares it shut down (the out-of-service
// taint). Checked, with the seconds each step took: the node is marked unschedulable by its
// missing heartbeat; its instances stay Running while their pods may still run there and fail
// (NodeUnresponsive) only once their pods are gone; VMs with runStrategy Always start again on
// the other node; at no moment do two QEMU processes of one VM exist on the machine.
func TestNodeLoss(t *testing.T) {
	if quick() {
		t.Skip("NV_FAULTS_QUICK=1: the node loss runs in the full suite (make test-faults)")
	}
	e := newEnv(t, "nodeloss")
	nodes, err := e.kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) < 2 {
		t.Skipf("needs two nodes (NV_NODES=2), the cluster has %d", len(nodes.Items))
	}
	lost, other := nodeToLose(nodes.Items, podsPerNode(e.componentPods("nativevirt-apiserver")),
		podsPerNode(e.componentPods("nativevirt-etcd")))
	if lost == "" || other == "" {
		t.Fatalf("no node among %d whose loss leaves an API server and a quorum of etcd members on another", len(nodes.Items))
	}
	t.Logf("losing node %s; the VMs should move to %s", lost, other)

	// Four guests preferring the node to lose, so that it runs most of them.
	g := &guests{e: e, all: map[string]guest{}}
	for i := 1; i <= 4; i++ {
		vm := e.demoVM(fmt.Sprintf("guest-%d", i), kubevirtv1.RunStrategyAlways)
		vm.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 100,
				Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{lost}}}}}}}}
		if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(context.Background(), vm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		g.all[vm.Name] = guest{Name: vm.Name}
	}
	for _, name := range g.names() {
		g.all[name] = g.running(name, "")
	}
	t.Logf("guests: %s", g)
	var onLost []string
	var lostQEMU procInfo
	for _, name := range g.names() {
		if g.all[name].Node == lost {
			onLost = append(onLost, name)
		}
	}
	if len(onLost) == 0 {
		t.Fatalf("no guest runs on %s", lost)
	}
	for _, p := range scanProcs("qemu-system") {
		if p.proc == g.all[onLost[0]].QEMU {
			lostQEMU = p
		}
	}
	podsCg := podsCgroup(lostQEMU)
	if podsCg == "" {
		t.Fatalf("cgroup of the pods of %s unknown (QEMU %s: %v)", lost, lostQEMU.proc, lostQEMU.cgroups)
	}
	fence := watchFencing(e.ns)
	defer fence.close()
	tl := e.watchTimeline()
	defer tl.close()
	w := e.startWriter()
	defer w.close()
	idx, err := nodeIndex(lost)
	if err != nil {
		t.Fatal(err)
	}
	// Whatever happens, the node comes back for the tests after this one.
	t.Cleanup(func() { e.restoreNode(lost, idx) })

	// 1. The node's kubelet and node agent stop.
	t0 := time.Now()
	kubelet, err := nodeProc(e.c.Dir(), "kubelet-"+lost)
	if err != nil {
		t.Fatal(err)
	}
	if err := kill(kubelet); err != nil {
		t.Fatal(err)
	}
	agents := 0
	for _, p := range e.componentPods("nativevirt-handler") {
		if p.Spec.NodeName == lost {
			for _, a := range podProcs(p.UID, "nativevirt-hand") {
				if err := kill(a); err != nil {
					t.Fatal(err)
				}
				agents++
			}
		}
	}
	if agents == 0 {
		t.Fatalf("no node agent process found on %s", lost)
	}
	t.Logf("killed -9 kubelet-%s %s and its node agent", lost, kubelet)
	if leader, err := e.controllerLease(); err == nil {
		holder := *leader.Spec.HolderIdentity
		pod, _, _ := strings.Cut(holder, "_")
		if p, err := e.kube.CoreV1().Pods(nvNamespace).Get(context.Background(), pod, metav1.GetOptions{}); err == nil {
			t.Logf("controller leader: %s on %s", holder, p.Spec.NodeName)
		}
	}
	step := func(what string, cond func() (bool, error)) time.Duration {
		t.Helper()
		e.waitFor(what, lossTimeout, cond)
		d := time.Since(t0)
		t.Logf("after %s: %s", secs(d), what)
		return d
	}
	node := func() *corev1.Node {
		n, err := e.kube.CoreV1().Nodes().Get(context.Background(), lost, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	notReady := step("node "+lost+" NotReady (kube-controller-manager)", func() (bool, error) { return !nodeReady(node()), nil })
	unschedulable := step("node "+lost+" labelled kubevirt.io/schedulable=false (stale heartbeat)", func() (bool, error) {
		return node().Labels["kubevirt.io/schedulable"] == "false", nil
	})
	// The pods may still run there (they do: only the kubelet and the agent stopped), so the
	// instances must stay as they are.
	time.Sleep(20 * time.Second)
	for _, bad := range g.checkUntouched(nil) {
		t.Errorf("before the node is declared down: %s", bad)
	}
	for _, name := range onLost {
		if at, reason, failed := tl.failure(g.all[name].UID); failed {
			t.Errorf("instance of %s failed (%s) at %s while its launcher pod could still run on %s", name, reason, at.UTC().Format(time.RFC3339), lost)
		}
	}

	// 2. The node dies (its pods' processes are killed, as a power cut would) and the operator
	// says so with the out-of-service taint.
	killed := 0
	for pass := 0; pass < 3; pass++ {
		for _, p := range scanProcs() {
			if p.underCgroup(podsCg) && kill(p.proc) == nil {
				killed++
			}
		}
		time.Sleep(time.Second)
	}
	t.Logf("killed -9 the %d processes under %s (the pods of %s)", killed, podsCg, lost)
	for _, name := range onLost {
		if alive(g.all[name].QEMU) {
			t.Fatalf("QEMU of %s (%s) survived", name, g.all[name].QEMU)
		}
	}
	if err := poll(time.Minute, time.Second, func() (bool, error) {
		n := node()
		n.Spec.Taints = append(n.Spec.Taints, outOfServiceTaint)
		_, err := e.kube.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{})
		return err == nil, err
	}); err != nil {
		t.Fatalf("tainting %s out of service: %v", lost, err)
	}
	tainted := time.Since(t0)
	podsGone := step("the launcher pods of the lost guests gone", func() (bool, error) {
		for _, name := range onLost {
			if _, ok := tl.podGone(g.all[name].UID); !ok {
				return false, fmt.Errorf("pod of %s still there", name)
			}
		}
		return true, nil
	})
	failed := step("the lost guests' instances Failed", func() (bool, error) {
		for _, name := range onLost {
			if _, _, ok := tl.failure(g.all[name].UID); !ok {
				return false, fmt.Errorf("instance of %s not failed", name)
			}
		}
		return true, nil
	})
	for _, name := range onLost {
		_, reason, _ := tl.failure(g.all[name].UID)
		if reason != "NodeUnresponsive" {
			t.Errorf("instance of %s failed with reason %q, want NodeUnresponsive", name, reason)
		}
		var left string
		if err := poll(time.Minute, 100*time.Millisecond, func() (bool, error) {
			var read bool
			left, read = tl.podLeftAtFailure(g.all[name].UID)
			return read, nil
		}); err != nil {
			t.Errorf("instance of %s: the read of its pod at its failure did not happen: %v", name, err)
		} else if left != "" {
			t.Errorf("instance of %s failed while its launcher %s could still run", name, left)
		}
	}
	failReasons := reasons(tl, g, onLost)
	if leader, err := e.controllerLease(); err == nil {
		t.Logf("controller leader now: %s (acquired %s)", *leader.Spec.HolderIdentity, leader.Spec.AcquireTime.UTC().Format(time.RFC3339))
	}
	killedGuests := map[string]bool{}
	for _, name := range onLost {
		killedGuests[name] = true
		old := g.all[name]
		g.all[name] = g.running(name, old.UID)
		if g.all[name].Node != other {
			t.Errorf("%s restarted on %s, want %s", name, g.all[name].Node, other)
		}
	}
	restarted := time.Since(t0)
	t.Logf("guests after the loss: %s", g)
	for _, bad := range g.checkUntouched(killedGuests) {
		t.Errorf("a guest on %s: %s", other, bad)
	}
	for _, bad := range e.doubles() {
		t.Error(bad)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, bad := range w.verify(ctx) {
		t.Errorf("writer: %s", bad)
	}
	twice, scans := fence.violations()
	for _, v := range twice {
		t.Errorf("two QEMU processes of one VM: %s", v)
	}
	sent, failedWrites, _ := w.stats(t0, time.Now())
	table := fmt.Sprintf(`| step (node %s lost, %d of %d guests on it) | seconds after the kubelet and agent stopped |
|---|---|
| node NotReady (kube-controller-manager) | %s |
| node labelled kubevirt.io/schedulable=false (heartbeat stale) | %s |
| node's pods killed, out-of-service taint set | %s |
| launcher pods gone from the API | %s |
| instances Failed (%s) | %s |
| guests Running again on %s | %s |

Writer during the loss: %d writes, %d failed. QEMU scans: %d, two processes of one VM seen: %d.
`, lost, len(onLost), len(g.all), secs(notReady), secs(unschedulable), secs(tainted), secs(podsGone),
		failReasons, secs(failed), other, secs(restarted), sent, failedWrites, scans, len(twice))
	t.Logf("node loss:\n%s", table)
	writeReport(t, "nodeloss.md", table)
}

// reasons are the distinct reasons the lost guests' instances failed with.
func reasons(tl *timeline, g *guests, names []string) string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		_, r, _ := tl.failure(g.all[n].UID)
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return strings.Join(out, ", ")
}

// restoreNode brings the lost node back: the out-of-service taint goes, its kubelet starts
// again (hack/cluster/node-proc.sh waits until the node is Ready and untainted), the node
// agent's pod with it, and the node is healthy again.
func (e *env) restoreNode(name string, idx int) {
	ctx, cancel := context.WithTimeout(context.Background(), lossTimeout)
	defer cancel()
	if err := poll(time.Minute, time.Second, func() (bool, error) {
		n, err := e.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		var keep []corev1.Taint
		for _, tt := range n.Spec.Taints {
			if tt.Key != outOfServiceTaint.Key {
				keep = append(keep, tt)
			}
		}
		if len(keep) == len(n.Spec.Taints) {
			return true, nil
		}
		n.Spec.Taints = keep
		_, err = e.kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err == nil, err
	}); err != nil {
		e.t.Errorf("removing the out-of-service taint of %s: %v", name, err)
	}
	if err := e.c.Run(ctx, "hack/cluster/node-proc.sh", strconv.Itoa(idx), "kubelet"); err != nil {
		e.t.Errorf("restarting kubelet-%s: %v", name, err)
	}
	if err := poll(lossTimeout, time.Second, func() (bool, error) { return e.nodeHealthy(name) }); err != nil {
		e.t.Errorf("node %s not healthy again: %v", name, err)
	}
}

// podsPerNode counts pods by the node they run on.
func podsPerNode(pods []corev1.Pod) map[string]int {
	n := map[string]int{}
	for _, p := range pods {
		n[p.Spec.NodeName]++
	}
	return n
}

// nodeToLose picks the node to lose and one that stays: the loss must leave an API server running
// on another node and, in the HA installation (its etcd members: etcd), a majority of the members
// (losing the API is the faults of TestFaults). A node without an API server is preferred (the
// default installation's single one; either node of the HA installation's two).
func nodeToLose(nodes []corev1.Node, api, etcd map[string]int) (lost, other string) {
	apis, members := 0, 0
	for _, c := range api {
		apis += c
	}
	for _, c := range etcd {
		members += c
	}
	survives := func(n string) bool {
		return apis-api[n] > 0 && (members == 0 || 2*(members-etcd[n]) > members)
	}
	for _, preferNoAPI := range []bool{true, false} {
		for _, n := range nodes {
			if survives(n.Name) && (!preferNoAPI || api[n.Name] == 0) {
				lost = n.Name
				break
			}
		}
		if lost != "" {
			break
		}
	}
	for _, n := range nodes {
		if n.Name != lost {
			other = n.Name
			break
		}
	}
	return lost, other
}
