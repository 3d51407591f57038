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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

// controllerTimeout bounds each wait for the controllers, the scheduler and the kubelet.
const controllerTimeout = 3 * time.Minute

// ctrlEnv is one test's view of the cluster through client-go.
type ctrlEnv struct {
	t    *testing.T
	c    *framework.Cluster
	ns   string
	kv   *versioned.Clientset
	kube *kubernetes.Clientset
}

func newCtrlEnv(t *testing.T, prefix string) *ctrlEnv {
	t.Helper()
	c := requireNativeVirt(t)
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	e := &ctrlEnv{t: t, c: c, ns: testNamespace(t, c, prefix)}
	if e.kv, err = versioned.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if e.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	e.waitSchedulableNode()
	return e
}

// waitSchedulableNode waits for a node agent to mark a node kubevirt.io/schedulable=true:
// launcher pods select only such nodes.
func (e *ctrlEnv) waitSchedulableNode() {
	e.t.Helper()
	e.wait("a node labelled kubevirt.io/schedulable=true by the node agent", func() (bool, error) {
		nodes, err := e.kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "kubevirt.io/schedulable=true"})
		return err == nil && len(nodes.Items) > 0, err
	})
}

func (e *ctrlEnv) wait(what string, cond func() (bool, error)) {
	e.t.Helper()
	deadline := time.Now().Add(controllerTimeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(time.Second)
	}
	out, _ := e.c.Kubectl("get", "vm,vmi,vmirs,pods", "-n", e.ns, "-o", "wide")
	e.t.Fatalf("timed out waiting for %s (last error: %v)\n%s", what, last, out)
}

// show logs `kubectl get vm,vmi,pods` at a step, as a user would see it.
func (e *ctrlEnv) show(step string) {
	e.t.Helper()
	out, err := e.c.Kubectl("get", "vm,vmi,pods", "-n", e.ns)
	if err != nil {
		e.t.Logf("%s: %v", step, err)
		return
	}
	e.t.Logf("%s:\n%s", step, out)
}

// demoVM is the project's demo VM (artifacts/examples/vm-demo.yaml) with the given run strategy.
func (e *ctrlEnv) demoVM(strategy kubevirtv1.VirtualMachineRunStrategy) *kubevirtv1.VirtualMachine {
	e.t.Helper()
	raw, err := os.ReadFile(filepath.Join(e.c.Root(), "artifacts", "examples", "vm-demo.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	vm := &kubevirtv1.VirtualMachine{}
	if err := yaml.Unmarshal(raw, vm); err != nil {
		e.t.Fatal(err)
	}
	vm.Namespace = e.ns
	vm.Spec.RunStrategy = &strategy
	return vm
}

func (e *ctrlEnv) vm(name string) *kubevirtv1.VirtualMachine {
	e.t.Helper()
	vm, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return vm
}

func (e *ctrlEnv) vmi(name string) (*kubevirtv1.VirtualMachineInstance, error) {
	return e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Get(context.Background(), name, metav1.GetOptions{})
}

// subresource calls PUT on a VM subresource at virtctl's path.
func (e *ctrlEnv) subresource(name, action string) {
	e.t.Helper()
	err := e.kv.KubevirtV1().RESTClient().Put().
		AbsPath("/apis/subresources.kubevirt.io/v1/namespaces", e.ns, "virtualmachines", name, action).
		Body([]byte("{}")).SetHeader("Content-Type", "application/json").Do(context.Background()).Error()
	if err != nil {
		e.t.Fatalf("%s %s: %v", action, name, err)
	}
}

func (e *ctrlEnv) printable(name string, want ...kubevirtv1.VirtualMachinePrintableStatus) {
	e.t.Helper()
	e.wait(fmt.Sprintf("VM %s %v", name, want), func() (bool, error) {
		got := e.vm(name).Status.PrintableStatus
		for _, w := range want {
			if got == w {
				return true, nil
			}
		}
		return false, fmt.Errorf("printableStatus %s", got)
	})
}

// scheduled waits for an instance other than `not` that is Scheduled (or already Running) on a
// node, with its launcher pod bound to that node, and returns it.
func (e *ctrlEnv) scheduled(name string, not types.UID) *kubevirtv1.VirtualMachineInstance {
	e.t.Helper()
	var vmi *kubevirtv1.VirtualMachineInstance
	e.wait("instance "+name+" Scheduled with its pod bound", func() (bool, error) {
		v, err := e.vmi(name)
		if err != nil || v.UID == not {
			return false, err
		}
		if p := v.Status.Phase; (p != kubevirtv1.Scheduled && p != kubevirtv1.Running) || v.Status.NodeName == "" {
			return false, fmt.Errorf("phase %s node %q", p, v.Status.NodeName)
		}
		pods, err := e.kube.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kubevirt.io/created-by=" + string(v.UID)})
		if err != nil || len(pods.Items) != 1 || pods.Items[0].Spec.NodeName != v.Status.NodeName {
			return false, fmt.Errorf("launcher pods: %v", podSummary(pods))
		}
		vmi = v
		return true, nil
	})
	if got := vmi.Labels[kubevirtv1.NodeNameLabel]; got != vmi.Status.NodeName {
		e.t.Errorf("label %s = %q, want %q", kubevirtv1.NodeNameLabel, got, vmi.Status.NodeName)
	}
	return vmi
}

func (e *ctrlEnv) gone(name string) {
	e.t.Helper()
	e.wait("instance "+name+" to be gone", func() (bool, error) {
		_, err := e.vmi(name)
		return apierrors.IsNotFound(err), nil
	})
}

// gcObserved returns once kube-controller-manager's garbage collector watches VirtualMachines and
// VirtualMachineInstances and has observed every one created so far: it creates a barrier of each
// kind, owned by a VirtualMachine that does not exist, and waits until the collector deleted both.
// The collector receives each kind through one watch, in order, so having acted on a barrier it has
// seen everything of that kind created before it — if that watch was already running when those
// objects were created. The collector starts its watches of an API group only at its discovery
// resync (every 30 s) after the group became available; a watch started later lists the existing
// objects instead, the two kinds independently and each in key order, and an owner already being
// deleted with the orphan finalizer may then be processed before its dependents: none are orphaned
// and the dependent is later deleted as having a missing owner. Hence tests call this once before
// creating anything, and again right before a delete that relies on the collector.
func (e *ctrlEnv) gcObserved() {
	e.t.Helper()
	ctx := context.Background()
	owner := metav1.OwnerReference{
		APIVersion: kubevirtv1.SchemeGroupVersion.String(),
		Kind:       "VirtualMachine",
		Name:       "gc-barrier-owner-that-does-not-exist",
		UID:        types.UID("00000000-0000-0000-0000-00000000dead"),
	}
	meta := metav1.ObjectMeta{GenerateName: "gc-barrier-", Namespace: e.ns, OwnerReferences: []metav1.OwnerReference{owner}}
	vm := e.demoVM(kubevirtv1.RunStrategyHalted)
	vm.ObjectMeta = meta
	createdVM, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	barrier := &kubevirtv1.VirtualMachineInstance{ObjectMeta: meta, Spec: *vm.Spec.Template.Spec.DeepCopy()}
	// No node matches: the barrier never boots a guest while it waits for the collector.
	barrier.Spec.NodeSelector = map[string]string{"nativevirt.io/e2e-gc-barrier": "no-such-node"}
	created, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, barrier, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.wait("the garbage collector to delete barrier VM "+createdVM.Name+" and instance "+created.Name, func() (bool, error) {
		_, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Get(ctx, createdVM.Name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return false, err
		}
		_, err = e.vmi(created.Name)
		return apierrors.IsNotFound(err), nil
	})
}

func podSummary(pods *corev1.PodList) string {
	if pods == nil {
		return "none"
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, fmt.Sprintf("%s(%s on %q)", p.Name, p.Status.Phase, p.Spec.NodeName))
	}
	return strings.Join(out, ", ")
}

// TestControllerVMLifecycle: start → Scheduled with the pod bound by kube-scheduler; stop;
// start; restart (a new instance, created only after the old one is gone); orphaning delete and
// adoption by the re-created VM.
func TestControllerVMLifecycle(t *testing.T) {
	e := newCtrlEnv(t, "e2e-ctrl")
	ctx := context.Background()
	const name = "vm-demo"
	e.gcObserved() // the collector must watch both kinds before the VM and its instances exist
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, e.demoVM(kubevirtv1.RunStrategyHalted), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.printable(name, kubevirtv1.VirtualMachineStatusStopped)
	e.show("created")

	e.subresource(name, "start")
	first := e.scheduled(name, "")
	vm := e.vm(name)
	if !vm.Status.Created || metav1.GetControllerOf(first) == nil || metav1.GetControllerOf(first).UID != vm.UID {
		t.Errorf("VM created=%v, instance controller %v", vm.Status.Created, metav1.GetControllerOf(first))
	}
	if fw := first.Spec.Domain.Firmware; fw == nil || fw.UUID != vm.Spec.Template.Spec.Domain.Firmware.UUID {
		t.Errorf("instance firmware %+v, want the VM's UUID %s", fw, vm.Spec.Template.Spec.Domain.Firmware.UUID)
	}
	e.show("started")

	e.subresource(name, "stop")
	e.gone(name)
	e.printable(name, kubevirtv1.VirtualMachineStatusStopped)
	e.wait("the launcher pod to be gone", func() (bool, error) {
		pods, err := e.kube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "kubevirt.io/created-by=" + string(first.UID)})
		return err == nil && len(pods.Items) == 0, err
	})
	e.show("stopped")

	e.subresource(name, "start")
	second := e.scheduled(name, first.UID)
	e.subresource(name, "restart")
	third := e.scheduled(name, second.UID)
	e.show("restarted")

	// --cascade=orphan: the garbage collector drops the owner reference and keeps the instance;
	// the re-created VM (same name, new UID) adopts it instead of starting another one. The
	// collector orphans only the dependents already in its graph: one it has not observed yet
	// would later be found with a missing owner and deleted, so wait until it has seen `third`.
	// The instance settles first (its guest runs), so that the delete below meets no write of
	// the restart still in flight.
	e.wait("instance "+name+" Running", func() (bool, error) {
		v, err := e.vmi(name)
		if err != nil || v.UID != third.UID {
			return false, fmt.Errorf("instance: %v", err)
		}
		return v.Status.Phase == kubevirtv1.Running, fmt.Errorf("phase %s", v.Status.Phase)
	})
	e.gcObserved()
	if _, err := e.c.Kubectl("delete", "vm", name, "-n", e.ns, "--cascade=orphan"); err != nil {
		t.Fatal(err)
	}
	e.wait("the VM to be gone and the instance orphaned", func() (bool, error) {
		_, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Get(ctx, name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return false, err
		}
		v, err := e.vmi(name)
		if apierrors.IsNotFound(err) {
			// Fail at once, with what the controllers and the collector recorded.
			events, _ := e.c.Kubectl("get", "events", "-n", e.ns, "--sort-by=.lastTimestamp",
				"-o", "custom-columns=TIME:.lastTimestamp,KIND:.involvedObject.kind,NAME:.involvedObject.name,REASON:.reason,MESSAGE:.message")
			t.Fatalf("the orphaned instance was deleted (want it kept without a controller); events:\n%s", events)
		}
		return err == nil && metav1.GetControllerOf(v) == nil, err
	})
	recreated, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, e.demoVM(kubevirtv1.RunStrategyAlways), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.wait("the orphan to be adopted", func() (bool, error) {
		v, err := e.vmi(name)
		if err != nil {
			return false, err
		}
		if v.UID != third.UID {
			return false, fmt.Errorf("instance replaced: %s", v.UID)
		}
		ref := metav1.GetControllerOf(v)
		return ref != nil && ref.UID == recreated.UID, nil
	})
	e.show("adopted")
	events, _ := e.c.Kubectl("get", "events", "-n", e.ns, "--field-selector", "involvedObject.kind=VirtualMachine",
		"-o", "custom-columns=REASON:.reason,MESSAGE:.message")
	if !strings.Contains(events, "SuccessfulCreate") || !strings.Contains(events, "SuccessfulDelete") {
		t.Errorf("VM events lack SuccessfulCreate/SuccessfulDelete:\n%s", events)
	}
}

// TestControllerReplicaSetScale scales a VirtualMachineInstanceReplicaSet 0 → 3 → 1 with
// `kubectl scale` (the /scale subresource).
func TestControllerReplicaSetScale(t *testing.T) {
	e := newCtrlEnv(t, "e2e-vmirs")
	ctx := context.Background()
	template := e.demoVM(kubevirtv1.RunStrategyHalted).Spec.Template.DeepCopy()
	template.ObjectMeta.Labels = map[string]string{"rs": "demo"}
	zero := int32(0)
	rs := &kubevirtv1.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: e.ns},
		Spec: kubevirtv1.VirtualMachineInstanceReplicaSetSpec{
			Replicas: &zero,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"rs": "demo"}},
			Template: template,
		},
	}
	if _, err := e.kv.KubevirtV1().VirtualMachineInstanceReplicaSets(e.ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	active := func() int {
		list, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "rs=demo"})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, v := range list.Items {
			if v.DeletionTimestamp == nil {
				n++
			}
		}
		return n
	}
	for _, n := range []int{3, 1} {
		if _, err := e.c.Kubectl("scale", "vmirs", "demo", "-n", e.ns, fmt.Sprintf("--replicas=%d", n)); err != nil {
			t.Fatal(err)
		}
		e.wait(fmt.Sprintf("%d replicas", n), func() (bool, error) {
			got, err := e.kv.KubevirtV1().VirtualMachineInstanceReplicaSets(e.ns).Get(ctx, "demo", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return active() == n && got.Status.Replicas == int32(n) && got.Status.LabelSelector == "rs=demo",
				fmt.Errorf("active %d, status.replicas %d", active(), got.Status.Replicas)
		})
		out, _ := e.c.Kubectl("get", "vmirs,vmi", "-n", e.ns)
		t.Logf("scaled to %d:\n%s", n, out)
	}
}
