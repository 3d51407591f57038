package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// startOptions say which VMs startVMs starts and what it waits for.
type startOptions struct {
	// ns is the namespace of the VMs; prefix starts their names (prefix-000, prefix-001, ...).
	ns, prefix string
	// n VMs are created interval apart.
	n        int
	interval time.Duration
	// phase is the VMI phase each start is measured until (Scheduled or Running).
	phase string
	// deleteEarly deletes each VM as soon as its VMI reached phase; the writes are then not
	// counted (the deletions' writes would be mixed in).
	deleteEarly bool
	// paused starts the guests with paused vCPUs (startStrategy Paused).
	paused bool
	// node, when set, is the only node the VMs may run on.
	node string
	// components, when set, accumulates the CPU of each process from the first create until
	// the last VMI reached phase.
	components *ComponentCPU
}

// startVMs creates o.n small VMs o.interval apart, waits until each VMI reached o.phase (or
// failed), counts the API writes meanwhile, then deletes the VMs and waits until their VMIs are
// gone. Watches on the VMIs and the launcher pods, and for phase Running the launchers' and node
// agents' logs, give each start's milestones.
func startVMs(ctx context.Context, e *Env, o startOptions) (startRun, error) {
	var out startRun
	c, err := NewWatchClient(e.Kube)
	if err != nil {
		return out, err
	}
	vmis := c.Resource(VMIResource).Namespace(o.ns)
	vms := c.Resource(VMResource).Namespace(o.ns)
	w, pw, err := watchStarts(ctx, vmis, c.Resource(podResource).Namespace(o.ns))
	if err != nil {
		return out, err
	}
	defer w.Stop()
	defer pw.Stop()
	beforeKV, beforePods, err := writeCounters(ctx, e)
	if err != nil {
		return out, err
	}
	defer func() {
		// Also after a failure: no VM of this run outlives it.
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = vms.DeleteCollection(cctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}()

	s := newStartState(o)
	go s.followPods(pw)
	go s.followVMIs(ctx, w, vms)
	var procBefore ProcSnapshot
	if o.components != nil {
		procBefore = ReadProcSnapshot()
	}
	first, cpuBefore := time.Now(), ReadCPUTimes()
	if err := s.createVMs(ctx, vms); err != nil {
		return out, err
	}
	timeout := 90*time.Second + time.Duration(o.n)*(o.interval+time.Second)
	select {
	case <-s.done:
	case <-time.After(timeout):
		out.failure = fmt.Sprintf("timed out after %s", timeout)
	case <-ctx.Done():
		return out, ctx.Err()
	}
	cpuAfter := ReadCPUTimes()
	if o.components != nil {
		o.components.Add(procBefore, ReadProcSnapshot(), cpuAfter.Busy-cpuBefore.Busy)
	}
	out.cpuBusy = cpuBefore.BusyFraction(cpuAfter)
	out.cpuStolen = cpuBefore.StealFraction(cpuAfter)
	out.cpuSeconds = float64(cpuAfter.Busy-cpuBefore.Busy) / clockTicks
	afterKV, afterPods, err := trailingWriteCounters(ctx, e, s.wentPast)
	if err != nil {
		return out, err
	}
	s.collect(ctx, e, first, &out)
	out.summarize()
	if !o.deleteEarly {
		out.writes = Delta(beforeKV, afterKV)
		out.writes["virtualmachines"] -= float64(o.n)
		out.pods = afterPods - beforePods
	}
	return out, deleteVMs(ctx, vms, vmis, o.ns)
}

// watchStarts watches the VMIs and the launcher pods from now on.
func watchStarts(ctx context.Context, vmis, pods dynamic.ResourceInterface) (watch.Interface, watch.Interface, error) {
	l, err := vmis.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, nil, err
	}
	w, err := vmis.Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
	if err != nil {
		return nil, nil, err
	}
	launcherPods := metav1.ListOptions{LabelSelector: kubevirtv1.AppLabel + "=" + launcherpod.LauncherLabelValue}
	pl, err := pods.List(ctx, launcherPods)
	if err != nil {
		w.Stop()
		return nil, nil, err
	}
	launcherPods.ResourceVersion = pl.GetResourceVersion()
	pw, err := pods.Watch(ctx, launcherPods)
	if err != nil {
		w.Stop()
		return nil, nil, err
	}
	return w, pw, nil
}

// deleteVMs deletes the namespace's VMs and waits until their VMIs are gone, so that the next
// measurement starts on an empty node.
func deleteVMs(ctx context.Context, vms, vmis dynamic.ResourceInterface, ns string) error {
	if err := vms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := vmis.List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil && len(l.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("VMIs of %s still there 5 min after their VMs were deleted", ns)
	}
	return nil
}

// startState is what the watches of one startVMs saw, guarded by mu.
type startState struct {
	o         startOptions
	mu        sync.Mutex
	tls       map[string]*timeline
	launchers map[string]*corev1.Pod // the last state of each VM's launcher pod
	reached   map[string]time.Duration
	failed    map[string]string
	// past: a VMI was seen beyond the measured phase (the node side's writes begin).
	past bool
	// done is closed once every VMI reached the phase or failed, or the VMI watch ended.
	done     chan struct{}
	doneOnce sync.Once
}

func newStartState(o startOptions) *startState {
	return &startState{
		o:         o,
		tls:       map[string]*timeline{},
		launchers: map[string]*corev1.Pod{},
		reached:   map[string]time.Duration{},
		failed:    map[string]string{},
		done:      make(chan struct{}),
	}
}

// createVMs creates the VMs, o.interval apart, and starts their timelines.
func (s *startState) createVMs(ctx context.Context, vms dynamic.ResourceInterface) error {
	for i := 0; i < s.o.n; i++ {
		name := fmt.Sprintf("%s-%03d", s.o.prefix, i)
		obj, err := smallVMObject(s.o.ns, name)
		if err != nil {
			return err
		}
		if s.o.paused {
			if err := unstructured.SetNestedField(obj.Object, "Paused", "spec", "template", "spec", "startStrategy"); err != nil {
				return err
			}
		}
		if s.o.node != "" {
			if err := unstructured.SetNestedStringMap(obj.Object, map[string]string{corev1.LabelHostname: s.o.node}, "spec", "template", "spec", "nodeSelector"); err != nil {
				return err
			}
		}
		s.mu.Lock()
		s.tls[name] = &timeline{}
		s.tls[name].see(msCreated, time.Now())
		s.mu.Unlock()
		if _, err := vms.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create VM %s: %w", name, err)
		}
		if s.o.interval > 0 && i < s.o.n-1 {
			time.Sleep(s.o.interval)
		}
	}
	return nil
}

// followPods records the launcher pods' milestones until the watch ends.
func (s *startState) followPods(pw watch.Interface) {
	for ev := range pw.ResultChan() {
		now := time.Now()
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
			continue
		}
		var pod corev1.Pod
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pod) != nil {
			continue
		}
		s.mu.Lock()
		if tl, ok := s.tls[pod.Labels[launcherpod.VMINameLabel]]; ok {
			tl.observePod(&pod, now)
			s.launchers[pod.Labels[launcherpod.VMINameLabel]] = &pod
		}
		s.mu.Unlock()
	}
}

// followVMIs records the VMIs' phases until the watch ends; it stays on after every VMI reached
// the phase, to see the first one go past it.
func (s *startState) followVMIs(ctx context.Context, w watch.Interface, vms dynamic.ResourceInterface) {
	defer s.doneOnce.Do(func() { close(s.done) })
	for ev := range w.ResultChan() {
		now := time.Now()
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
			continue
		}
		if s.observeVMI(ctx, u, now, vms) {
			s.doneOnce.Do(func() { close(s.done) })
		}
	}
}

// observeVMI records one VMI's phase seen at now; it says whether every VMI reached the phase
// or failed.
func (s *startState) observeVMI(ctx context.Context, u *unstructured.Unstructured, now time.Time, vms dynamic.ResourceInterface) bool {
	p, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	s.mu.Lock()
	defer s.mu.Unlock()
	tl, ok := s.tls[u.GetName()]
	if ok {
		tl.observeVMIPhase(p, now)
		if phaseRank[p] > phaseRank[s.o.phase] {
			s.past = true
		}
	}
	if _, seen := s.reached[u.GetName()]; ok && !seen {
		if p == "Failed" {
			reason, _, _ := unstructured.NestedString(u.Object, "status", "reason")
			s.failed[u.GetName()] = reason
		} else if phaseRank[p] >= phaseRank[s.o.phase] {
			s.reached[u.GetName()] = now.Sub(tl.at[msCreated])
			if s.o.deleteEarly {
				go func(name string) { _ = vms.Delete(ctx, name, metav1.DeleteOptions{}) }(u.GetName())
			}
		}
	}
	return len(s.reached)+len(s.failed) == s.o.n
}

// wentPast says whether a VMI was seen beyond the measured phase.
func (s *startState) wentPast() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.past
}

// collect puts what the watches saw into out (for phase Running with the milestones of the
// logs written since shortly before first, the first create): the durations, failures,
// timelines and each VM's milestones.
func (s *startState) collect(ctx context.Context, e *Env, first time.Time, out *startRun) {
	chain := scheduledChain
	if s.o.phase == "Running" {
		chain = runningChain
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.o.phase == "Running" {
		logMilestones(ctx, e, s.o.ns, first.Add(-2*time.Second), s.launchers, s.tls)
	}
	ds := make([]time.Duration, 0, len(s.reached))
	for _, d := range s.reached {
		ds = append(ds, d)
	}
	if len(s.failed) > 0 {
		out.failure += fmt.Sprintf(" %d VMIs Failed (%s)", len(s.failed), failureReasons(ctx, e, s.o.ns, s.failed))
	}
	all := make([]*timeline, 0, len(s.tls))
	out.vms = map[string]map[string]float64{}
	for name, tl := range s.tls {
		all = append(all, tl)
		out.vms[name] = tl.offsets()
	}
	out.timelines, out.chain, out.durations = all, chain, ds
}
