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
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// guestCount is how many guests run through every fault.
const guestCount = 5

// quick reports whether the short form runs ($NV_FAULTS_QUICK=1, `make test`): one fault per
// kind of component instead of every pod and node.
func quick() bool { return os.Getenv("NV_FAULTS_QUICK") == "1" }

// result is what one fault cost and whether the promises held.
type result struct {
	fault             string
	sent, failed      int
	probeFailed       int
	apiBack, compBack time.Duration
	converged         time.Duration
	problems          []string
}

// apiProbe reads the VMs of the namespace through the aggregated API every 200 ms and notes
// when it last failed: the API answered again at the first success after that.
type apiProbe struct {
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	failures int
	lastFail time.Time
	backAt   time.Time
}

func (e *env) startProbe() *apiProbe {
	p := &apiProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := e.kv.KubevirtV1().VirtualMachines(e.ns).List(ctx, metav1.ListOptions{Limit: 1})
			cancel()
			now := time.Now()
			p.mu.Lock()
			if err != nil {
				p.failures++
				p.lastFail = now
				p.backAt = time.Time{}
			} else if !p.lastFail.IsZero() && p.backAt.IsZero() {
				p.backAt = now
			}
			p.mu.Unlock()
			select {
			case <-p.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return p
}

// result stops the probe: failed reads, and how long after t0 the API answered again (0 when
// it never stopped answering).
func (p *apiProbe) result(t0 time.Time) (int, time.Duration) {
	// A probe that saw failures keeps probing until it sees the API answer again.
	deadline := time.Now().Add(backTimeout)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		waiting := p.failures > 0 && p.backAt.IsZero()
		p.mu.Unlock()
		if !waiting {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failures == 0 {
		return 0, 0
	}
	if p.backAt.IsZero() {
		return p.failures, -1
	}
	return p.failures, p.backAt.Sub(t0)
}

// TestFaults runs guests and a writer and applies the faults one at a time (see the package
// comment); it prints the table docs/reliability.md keeps.
func TestFaults(t *testing.T) {
	e := newEnv(t, "faults")
	g := e.startGuests(guestCount)
	fence := watchFencing(e.ns)
	defer fence.close()
	w := e.startWriter()
	defer w.close()
	time.Sleep(5 * time.Second) // some acknowledged writes before the first fault

	var faults []fault
	faults = append(faults, e.podKillFaults("nativevirt-apiserver", "nativevirt-apis", "nativevirt-apiserver", e.apiAnswers)...)
	// The HA installation (make run HA=1) runs etcd members of its own (the StatefulSet
	// nativevirt-etcd): kill one; the others keep quorum and it rejoins. The default
	// installation's etcd is embedded in the apiserver.
	if etcd := e.podKillFaults("nativevirt-etcd", "etcd", "an etcd member", e.apiAnswers); len(etcd) > 0 {
		faults = append(faults, etcd[0])
	}
	faults = append(faults, e.leaderFault())
	agents := e.podKillFaults("nativevirt-handler", "nativevirt-hand", "the node agent", e.agentBeats)
	if quick() {
		agents = agents[:1]
	}
	faults = append(faults, agents...)
	faults = append(faults, e.libvirtdFault(g, "guest-1"))
	if !quick() {
		node := g.all["guest-2"].Node
		faults = append(faults, e.nodeProcFault(node, "kubelet"), e.nodeProcFault(node, "containerd"))
	}

	var results []result
	for _, f := range faults {
		r := e.apply(g, w, f)
		results = append(results, r)
		for _, p := range r.problems {
			t.Errorf("%s: %s", f.name, p)
		}
	}
	twice, scans := fence.violations()
	for _, v := range twice {
		t.Errorf("two QEMU processes of one VM: %s", v)
	}
	creates, updates := w.totals()
	table := formatTable(results)
	t.Logf("faults, %d guests, writer: %d VMs created and %d updates acknowledged; %d process scans for doubled QEMUs, %d found:\n%s",
		guestCount, creates, updates, scans, len(twice), table)
	writeReport(t, "faults.md", table)
}

// apply injects one fault, waits until the API, the component and the whole state are back,
// and checks the promises.
func (e *env) apply(g *guests, w *writer, f fault) result {
	e.t.Helper()
	e.t.Logf("=== fault: %s", f.name)
	r := result{fault: f.name}
	marks, bad := g.counterMarks()
	r.problems = append(r.problems, bad...)
	t0 := time.Now()
	probe := e.startProbe()
	back, err := f.inject(e)
	if err != nil {
		probe.result(t0)
		r.problems = append(r.problems, fmt.Sprintf("injecting: %v", err))
		return r
	}
	if err := poll(backTimeout, 200*time.Millisecond, back); err != nil {
		r.problems = append(r.problems, fmt.Sprintf("the component did not answer again within %s: %v", backTimeout, err))
	}
	r.compBack = time.Since(t0)

	// Converged: the guest killed on purpose runs again (a new instance and QEMU), every other
	// guest is untouched, every node is healthy, every NativeVirt pod Ready.
	killed := map[string]bool{}
	if f.killsGuest != "" {
		killed[f.killsGuest] = true
		old := g.all[f.killsGuest]
		g.all[f.killsGuest] = g.running(f.killsGuest, old.UID)
		e.t.Logf("%s back: instance %s on %s, QEMU %s (was %s, %s)", f.killsGuest, g.all[f.killsGuest].UID,
			g.all[f.killsGuest].Node, g.all[f.killsGuest].QEMU, old.UID, old.QEMU)
	}
	if err := poll(backTimeout, time.Second, func() (bool, error) { return e.converged() }); err != nil {
		r.problems = append(r.problems, fmt.Sprintf("did not converge within %s: %v", backTimeout, err))
	}
	r.converged = time.Since(t0)
	r.probeFailed, r.apiBack = probe.result(t0)
	r.sent, r.failed, _ = w.stats(t0, time.Now())
	_, _, errs := w.stats(t0, time.Now())
	if len(errs) > 0 {
		e.t.Logf("writer errors (first %d): %v", len(errs), errs)
	}
	if f.killsGuest != "" {
		g.counting(f.killsGuest) // its new guest boots and counts
	}
	r.problems = append(r.problems, g.checkUntouched(killed)...)
	r.problems = append(r.problems, g.checkCounters(marks, killed)...)
	r.problems = append(r.problems, e.doubles()...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r.problems = append(r.problems, w.verify(ctx)...)
	e.t.Logf("fault %q: API back after %s (%d failed reads), component after %s, converged after %s; writes %d sent, %d failed; problems: %d",
		f.name, r.apiBack.Round(100*time.Millisecond), r.probeFailed, r.compBack.Round(100*time.Millisecond),
		r.converged.Round(100*time.Millisecond), r.sent, r.failed, len(r.problems))
	return r
}

// converged: the API answers, every node is healthy and every NativeVirt pod Ready.
func (e *env) converged() (bool, error) {
	if ok, err := e.apiAnswers(corev1.Pod{}, time.Time{}); !ok {
		return false, fmt.Errorf("the API does not answer: %w", err)
	}
	nodes, err := e.kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	for _, n := range nodes.Items {
		if ok, err := e.nodeHealthy(n.Name); !ok {
			return false, err
		}
	}
	pods, err := e.kube.CoreV1().Pods(nvNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	var notReady []string
	for i := range pods.Items {
		if !podReady(&pods.Items[i]) {
			notReady = append(notReady, pods.Items[i].Name)
		}
	}
	sort.Strings(notReady)
	if len(notReady) > 0 {
		return false, fmt.Errorf("pods not ready: %v", notReady)
	}
	return true, nil
}
