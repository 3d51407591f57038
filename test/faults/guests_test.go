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
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

// bootTimeout bounds a guest's start under TCG on a busy 2-CPU machine.
const bootTimeout = 5 * time.Minute

// guest is what proves that a running guest was not restarted: its instance, its QEMU and the
// counter it prints on its serial console.
type guest struct {
	Name    string
	UID     types.UID
	Node    string
	QEMU    proc
	Counter *framework.Counter
}

// guests are the test's running VMs (runStrategy Always), by name.
type guests struct {
	e   *env
	all map[string]guest
}

// demoVM is the project's demo VM (artifacts/examples/vm-demo.yaml) named name with strategy;
// the file is read once (the writer calls this from its goroutine: it must not fail there).
func (e *env) demoVM(name string, strategy kubevirtv1.VirtualMachineRunStrategy) *kubevirtv1.VirtualMachine {
	e.t.Helper()
	e.demoOnce.Do(func() {
		raw, err := os.ReadFile(filepath.Join(e.c.Root(), "artifacts", "examples", "vm-demo.yaml"))
		if err != nil {
			e.demoErr = err
			return
		}
		e.demo = &kubevirtv1.VirtualMachine{}
		e.demoErr = yaml.Unmarshal(raw, e.demo)
	})
	if e.demoErr != nil {
		e.t.Fatal(e.demoErr)
	}
	vm := e.demo.DeepCopy()
	vm.Name, vm.Namespace = name, e.ns
	vm.Labels = map[string]string{"app": "faults"}
	vm.Spec.Template.ObjectMeta.Labels = map[string]string{"kubevirt.io/vm": name}
	vm.Spec.RunStrategy = &strategy
	return vm
}

// startGuests creates n demo VMs with runStrategy Always whose guests print a counter on their
// consoles, and waits until each runs in one QEMU and counts.
func (e *env) startGuests(n int) *guests {
	e.t.Helper()
	g := &guests{e: e, all: map[string]guest{}}
	for i := 1; i <= n; i++ {
		vm := e.demoVM(fmt.Sprintf("guest-%d", i), kubevirtv1.RunStrategyAlways)
		for i := range vm.Spec.Template.Spec.Volumes {
			if ci := vm.Spec.Template.Spec.Volumes[i].CloudInitNoCloud; ci != nil {
				ci.UserData = framework.CounterUserData(counterPeriod)
			}
		}
		if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(context.Background(), vm, metav1.CreateOptions{}); err != nil {
			e.t.Fatal(err)
		}
		g.all[vm.Name] = guest{Name: vm.Name}
	}
	for _, name := range g.names() {
		g.all[name] = g.running(name, "")
	}
	for _, name := range g.names() {
		g.counting(name)
	}
	e.t.Logf("guests running: %s", g)
	return g
}

func (g *guests) names() []string {
	var out []string
	for n := range g.all {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (g *guests) String() string {
	var parts []string
	for _, n := range g.names() {
		x := g.all[n]
		parts = append(parts, fmt.Sprintf("%s on %s (QEMU %s)", n, x.Node, x.QEMU))
	}
	return strings.Join(parts, "; ")
}

func (e *env) domain(vm string) string { return e.ns + "_" + vm }

// running waits until VM name has a Running instance other than `not` with one live launcher
// pod and one QEMU process on the machine, and returns it.
func (g *guests) running(name string, not types.UID) guest {
	e := g.e
	e.t.Helper()
	var out guest
	e.waitFor("guest "+name+" Running in one launcher pod and one QEMU", bootTimeout, func() (bool, error) {
		vmi, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if vmi.UID == not || vmi.Status.Phase != kubevirtv1.Running {
			return false, fmt.Errorf("instance %s phase %s", vmi.UID, vmi.Status.Phase)
		}
		pods, err := e.livePods(vmi.UID)
		if err != nil || len(pods) != 1 || pods[0].Status.Phase != corev1.PodRunning {
			return false, fmt.Errorf("%d live launcher pods (%v)", len(pods), err)
		}
		qemu := qemuByDomain()[e.domain(name)]
		if len(qemu) != 1 {
			return false, fmt.Errorf("QEMU processes %v", qemu)
		}
		out = guest{Name: name, UID: vmi.UID, Node: vmi.Status.NodeName, QEMU: qemu[0],
			Counter: framework.NewCounter(e.c.SerialLogPath(&pods[0]))}
		return true, nil
	})
	return out
}

// livePods are the launcher pods of instance uid that are not finished.
func (e *env) livePods(uid types.UID) ([]corev1.Pod, error) {
	list, err := e.kube.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: kubevirtv1.CreatedByLabel + "=" + string(uid)})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out, nil
}

// checkUntouched reports every guest not in killed whose instance, QEMU process or node
// changed: a guest restarted by a fault that was not aimed at it.
func (g *guests) checkUntouched(killed map[string]bool) []string {
	var bad []string
	now := qemuByDomain()
	for _, name := range g.names() {
		if killed[name] {
			continue
		}
		want := g.all[name]
		vmi, err := g.e.kv.KubevirtV1().VirtualMachineInstances(g.e.ns).Get(context.Background(), name, metav1.GetOptions{})
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s: reading its instance: %v", name, err))
		case vmi.UID != want.UID:
			bad = append(bad, fmt.Sprintf("%s: instance %s replaced by %s", name, want.UID, vmi.UID))
		case vmi.Status.Phase != kubevirtv1.Running:
			bad = append(bad, fmt.Sprintf("%s: instance %s", name, vmi.Status.Phase))
		}
		if q := now[g.e.domain(name)]; len(q) != 1 || q[0] != want.QEMU {
			bad = append(bad, fmt.Sprintf("%s: QEMU %v, was %s", name, q, want.QEMU))
		}
	}
	return bad
}

// fenceWatch scans the machine's processes for two QEMUs of one domain while it runs: the
// proof that no VM ever runs twice, on one node or across both.
type fenceWatch struct {
	prefix string
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	scans  int
	twice  []string
}

// watchFencing starts scanning every 250 ms for the domains of namespace ns.
func watchFencing(ns string) *fenceWatch {
	w := &fenceWatch{prefix: ns + "_", stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			for d, ps := range qemuByDomain() {
				if strings.HasPrefix(d, w.prefix) && len(ps) > 1 {
					w.mu.Lock()
					w.twice = append(w.twice, fmt.Sprintf("%s %s: %v", time.Now().UTC().Format("15:04:05.000"), d, ps))
					w.mu.Unlock()
				}
			}
			w.mu.Lock()
			w.scans++
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// violations returns the moments two QEMUs of one domain ran, and the number of scans made.
func (w *fenceWatch) violations() ([]string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.twice...), w.scans
}

func (w *fenceWatch) close() {
	close(w.stop)
	<-w.done
}
