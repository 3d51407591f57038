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
	"math/rand"
	"sort"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// genAnnotation carries the writer's generation of a VM: each acknowledged update raises it.
const genAnnotation = "faults.nativevirt.io/gen"

// maxWriterVMs bounds the VMs the writer creates; afterwards it only updates them.
const maxWriterVMs = 40

// request is one write the writer sent and how it ended.
type request struct {
	at  time.Time
	ok  bool
	err string
}

// writer creates stopped VMs and updates them through the aggregated API all along, and records
// every write the API acknowledged: those must all be readable after every fault.
type writer struct {
	e    *env
	stop chan struct{}
	done chan struct{}

	mu        sync.Mutex
	created   map[string]types.UID // acknowledged creates
	acked     map[string]int       // highest acknowledged generation per VM
	attempted map[string]int       // highest generation sent per VM
	log       []request
}

// startWriter starts writing about ten times a second until stopped.
func (e *env) startWriter() *writer {
	w := &writer{e: e, stop: make(chan struct{}), done: make(chan struct{}),
		created: map[string]types.UID{}, acked: map[string]int{}, attempted: map[string]int{}}
	go w.run()
	return w
}

func (w *writer) run() {
	defer close(w.done)
	rnd := rand.New(rand.NewSource(time.Now().UnixNano()))
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	next := 0
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
		w.mu.Lock()
		names := make([]string, 0, len(w.created))
		for n := range w.created {
			names = append(names, n)
		}
		w.mu.Unlock()
		if len(names) < maxWriterVMs && (len(names) == 0 || rnd.Intn(3) == 0) {
			next++
			w.create(fmt.Sprintf("w-%d", next))
			continue
		}
		sort.Strings(names)
		w.update(names[rnd.Intn(len(names))])
	}
}

func (w *writer) record(err error) {
	r := request{at: time.Now(), ok: err == nil}
	if err != nil {
		r.err = err.Error()
	}
	w.mu.Lock()
	w.log = append(w.log, r)
	w.mu.Unlock()
}

func (w *writer) create(name string) {
	vm := w.e.demoVM(name, kubevirtv1.RunStrategyHalted)
	vm.Annotations = map[string]string{genAnnotation: "0"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := w.e.kv.KubevirtV1().VirtualMachines(w.e.ns).Create(ctx, vm, metav1.CreateOptions{})
	w.record(err)
	if err == nil {
		w.mu.Lock()
		w.created[name] = got.UID
		w.mu.Unlock()
	}
}

func (w *writer) update(name string) {
	w.mu.Lock()
	w.attempted[name]++
	gen := w.attempted[name]
	w.mu.Unlock()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, genAnnotation, strconv.Itoa(gen))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := w.e.kv.KubevirtV1().VirtualMachines(w.e.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	w.record(err)
	if err == nil {
		w.mu.Lock()
		if gen > w.acked[name] {
			w.acked[name] = gen
		}
		w.mu.Unlock()
	}
}

// close stops the writer and waits for its last request.
func (w *writer) close() {
	close(w.stop)
	<-w.done
}

// stats counts the requests sent in [from, to) and those that failed, with the first errors.
func (w *writer) stats(from, to time.Time) (sent, failed int, errs []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.log {
		if r.at.Before(from) || !r.at.Before(to) {
			continue
		}
		sent++
		if !r.ok {
			failed++
			if len(errs) < 3 {
				errs = append(errs, r.err)
			}
		}
	}
	return sent, failed, errs
}

// totals are the writer's acknowledged creates and updates so far.
func (w *writer) totals() (creates, updates int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, g := range w.acked {
		updates += g
	}
	return len(w.created), updates
}

// verify reads every VM the writer created and reports each acknowledged write it does not
// find: a VM missing or replaced (another UID), or a generation older than acknowledged. An
// update that failed may still have been applied, so a newer generation is fine as long as it
// was sent.
func (w *writer) verify(ctx context.Context) []string {
	w.mu.Lock()
	created := make(map[string]types.UID, len(w.created))
	for k, v := range w.created {
		created[k] = v
	}
	acked := make(map[string]int, len(w.acked))
	for k, v := range w.acked {
		acked[k] = v
	}
	w.mu.Unlock()

	var list *kubevirtv1.VirtualMachineList
	err := poll(2*time.Minute, time.Second, func() (bool, error) {
		var err error
		list, err = w.e.kv.KubevirtV1().VirtualMachines(w.e.ns).List(ctx, metav1.ListOptions{})
		return err == nil, err
	})
	if err != nil {
		return []string{fmt.Sprintf("listing the VMs: %v", err)}
	}
	stored := map[string]*kubevirtv1.VirtualMachine{}
	for i := range list.Items {
		stored[list.Items[i].Name] = &list.Items[i]
	}
	w.mu.Lock()
	attempted := make(map[string]int, len(w.attempted))
	for k, v := range w.attempted {
		attempted[k] = v
	}
	w.mu.Unlock()
	var lost []string
	for name, uid := range created {
		vm := stored[name]
		if vm == nil {
			lost = append(lost, fmt.Sprintf("VM %s (created, UID %s) is missing", name, uid))
			continue
		}
		if vm.UID != uid {
			lost = append(lost, fmt.Sprintf("VM %s has UID %s, the acknowledged create %s", name, vm.UID, uid))
		}
		got, err := strconv.Atoi(vm.Annotations[genAnnotation])
		if err != nil || got < acked[name] || got > attempted[name] {
			lost = append(lost, fmt.Sprintf("VM %s: generation %q, acknowledged %d, sent up to %d",
				name, vm.Annotations[genAnnotation], acked[name], attempted[name]))
		}
	}
	sort.Strings(lost)
	return lost
}
