package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// clockTicks is USER_HZ, the unit of /proc/stat (100 on Linux).
const clockTicks = 100

// podResource is the core pods resource, watched through the dynamic client like the VMIs.
var podResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// ControlPlaneConfig sizes the control-plane suite.
type ControlPlaneConfig struct {
	// Burst VMs are created Interval apart and measured until their VMI is Scheduled.
	Burst    int
	Interval time.Duration
	// RunningBurst VMs are created at once and measured until Running (needs the node agent).
	RunningBurst int
	// SingleStarts is how many times one VM is started alone on the warm node (one after the
	// other, the machine settled in between) for the p50 of a single start.
	SingleStarts int
	// PausedBurst also starts the RunningBurst with the guests paused (a row without target).
	PausedBurst bool
}

// phaseRank orders the VMI phases a start goes through.
var phaseRank = map[string]int{"": 0, "Pending": 1, "Scheduling": 2, "Scheduled": 3, "Running": 4, "Succeeded": 5}

// startRun is the outcome of starting some VMs.
type startRun struct {
	dist    Dist
	reached int
	writes  map[string]float64 // kubevirt.io writes by resource, the benchmark's own creates removed
	pods    float64            // pod writes on kube-apiserver
	failure string
	// phases break the starts down (see timeline.go); stuck says where the VMs that did not
	// reach the phase stopped; vms are each VM's milestones in ms since its create.
	phases []PhaseStat
	stuck  string
	vms    map[string]map[string]float64
	// waited says how many launcher pods the scheduler could not place at first, and why.
	waited string
	// cpuBusy is the share of the machine's CPU time that was busy from the first create until
	// the last VMI reached the phase; cpuSeconds that busy time; cpuStolen the share of the
	// machine's CPU time that the hypervisor gave to others meanwhile (steal, part of busy).
	cpuBusy, cpuSeconds, cpuStolen float64
	// durations and timelines are the raw material of dist and phases, for mergeRuns.
	durations []time.Duration
	timelines []*timeline
	chain     []milestone
}

// mergeRuns makes one startRun of several runs of the same measurement (the API write counts
// are not merged: the repeated measurements do not report them).
func mergeRuns(runs []startRun) startRun {
	var out startRun
	if len(runs) == 0 {
		return out
	}
	out.chain = runs[0].chain
	out.vms = map[string]map[string]float64{}
	var failures []string
	busy, stolen := 0.0, 0.0
	for _, r := range runs {
		out.durations = append(out.durations, r.durations...)
		out.timelines = append(out.timelines, r.timelines...)
		out.cpuSeconds += r.cpuSeconds
		busy += r.cpuBusy
		stolen += r.cpuStolen
		for k, v := range r.vms {
			out.vms[k] = v
		}
		if r.failure != "" {
			failures = append(failures, r.failure)
		}
	}
	out.cpuBusy = busy / float64(len(runs))
	out.cpuStolen = stolen / float64(len(runs))
	out.failure = strings.Join(failures, "; ")
	out.summarize()
	return out
}

// summarize derives reached, the distribution and the phase breakdown from the durations of
// the VMs that reached the phase and the timelines of all the VMs started.
func (r *startRun) summarize() {
	r.reached = len(r.durations)
	r.dist = Summarize(r.durations, 0, len(r.timelines)-len(r.durations))
	r.phases = phaseStats(r.timelines, r.chain)
	r.stuck = whereStuck(r.timelines, r.chain)
	r.waited = waitedForRoom(r.timelines)
}

// RunControlPlane measures VM create → VMI Scheduled (pod bound) for 1 VM and for a burst of
// VMs created cfg.Interval apart, with the API writes per VMI start; with the node agent also
// create → Running for 1 VM on a warm node and for a burst. Without nativevirt-controller (or
// the node agent) the rows say "not deployed".
func RunControlPlane(ctx context.Context, e *Env, cfg ControlPlaneConfig) (*Result, error) {
	res := &Result{Suite: "control-plane", Title: "Control plane: VM create → VMI Scheduled / Running"}
	res.Columns = []string{"measurement", "VMs", "reached", "p50", "p95", "max", "writes/VMI"}
	res.Setup = map[string]string{
		"VM":     "runStrategy Always, 1 core, 128Mi guest, the demo containerDisk " + DemoDiskImage + ", grace period 0",
		"writes": "kubevirt.io writes (POST/PUT/PATCH/APPLY/DELETE) counted by nativevirt-apiserver's apiserver_request_total before the first create and 1 s after the last VMI reached the phase (sampled every 100 ms; the last sample before any VMI went past the phase, whose writes are the next phase's), minus the benchmark's own VM creates, per VMI",
	}
	singles := max(1, cfg.SingleStarts)
	names := []struct {
		label string
		n     int
		phase string
		goal  string
		// repeat runs the measurement that many times, one after the other.
		repeat int
		// paused starts the guests with paused vCPUs (startStrategy Paused): the VMI is Running
		// once its domain started, and no guest boots meanwhile.
		paused bool
	}{
		{"create → Scheduled, 1 VM", 1, "Scheduled", "", 1, false},
		{fmt.Sprintf("create → Scheduled, %d VMs %s apart", cfg.Burst, cfg.Interval), cfg.Burst, "Scheduled", "", 1, false},
		{fmt.Sprintf("create → Running, 1 VM on a warm node, %d times", singles), 1, "Running", "p50 ≤ 1 s", singles, false},
		{fmt.Sprintf("create → Running, burst of %d", cfg.RunningBurst), cfg.RunningBurst, "Running", "p95 ≤ 10 s", 1, false},
		// Not a target: the same burst without the guests' boots, which under TCG emulation
		// take most of the machine's CPU (with KVM a boot costs a fraction of it). What is left
		// is NativeVirt's, the kubelet's and the container runtime's.
		{fmt.Sprintf("create → Running, burst of %d, guests paused", cfg.RunningBurst), cfg.RunningBurst, "Running", "", 1, true},
	}
	if !cfg.PausedBurst {
		names = names[:len(names)-1]
	}
	ctrlOK, why := e.controllerReady(ctx)
	handlerOK, whyHandler := e.handlerReady(ctx)
	skip := func(i int, reason string) {
		n := names[i]
		res.AddRow(n.label, strconv.Itoa(n.n), "skipped: "+reason, "-", "-", "-", "-")
		if n.goal != "" {
			res.Targets = append(res.Targets, Skipped(n.label, n.goal, "skipped"))
		}
		if i < 2 {
			res.Targets = append(res.Targets, Skipped(n.label+": API writes per VMI start", "≤ 3", "skipped"))
		}
	}
	if ctrlOK {
		ctrlOK, why = e.schedulableNode(ctx)
	}
	if ctrlOK && handlerOK {
		if err := e.waitForDevices(ctx); err != nil {
			res.Note("no schedulable node offers %s after a minute: launcher pods may wait for the scheduler's back-off", tunResource)
		}
	}
	if !ctrlOK {
		for i := range names {
			skip(i, why)
		}
		return res, nil
	}
	const ns = "bench-control-plane"
	if err := e.Namespace(ctx, ns); err != nil {
		return res, err
	}
	var records []map[string]any
	defer func() { res.Records = records }()
	// Names unique per run: a run cancelled by a server restart may leave VMs behind.
	run := time.Now().Unix() % 100000
	// Warm up: a VM started and deleted before the measurements. A controller that has just
	// been (re)deployed is ready before its informers have listed the VMs (the first VM
	// waited 1.6 s for that), and a first start on the node loads the launcher and disk images
	// into containerd's cache; the measured starts are the later ones.
	warm := "Scheduled"
	if handlerOK {
		warm = "Running"
	}
	e.Logf("control-plane: warm-up (one VM to %s)", warm)
	if _, err := startVMs(ctx, e, ns, fmt.Sprintf("warm%d", run), 1, 0, warm, false, false); err != nil {
		return res, err
	}
	for i, n := range names {
		if n.phase == "Running" && !handlerOK {
			skip(i, whyHandler)
			continue
		}
		interval := time.Duration(0)
		if i == 1 {
			interval = cfg.Interval
		}
		// With the node agent every Scheduled VMI goes on to boot a guest: a burst deletes each
		// VM once measured, so that the node is not asked to run them all at once.
		deleteEarly := i == 1 && handlerOK
		var runs []startRun
		for k := 0; k < n.repeat; k++ {
			if busy, ok := settle(ctx, settleBusy, settleWait); !ok {
				res.Note("%s: the CPUs were still %.0f%% busy after %s of waiting for the previous measurement's pods to go", n.label, 100*busy, settleWait)
			}
			e.Logf("control-plane: %s (%d of %d)", n.label, k+1, n.repeat)
			r, err := startVMs(ctx, e, ns, fmt.Sprintf("cp%d-%d-%d", run, i, k), n.n, interval, n.phase, deleteEarly, n.paused)
			if err != nil {
				return res, err
			}
			runs = append(runs, r)
		}
		r := runs[0]
		if n.repeat > 1 {
			r = mergeRuns(runs)
		}
		perVMI := "-"
		if n.phase == "Scheduled" && r.reached > 0 && r.writes != nil {
			total := 0.0
			for _, v := range r.writes {
				total += v
			}
			w := total / float64(n.n)
			perVMI = fmt.Sprintf("%.1f (+%.1f pod)", w, r.pods/float64(n.n))
			res.Targets = append(res.Targets, NewCheck(n.label+": API writes per VMI start", "≤ 3", fmt.Sprintf("%.1f", w), w <= 3))
		}
		res.AddRow(n.label, strconv.Itoa(n.n*n.repeat), fmt.Sprintf("%d", r.reached), FmtMs(r.dist.P50Ms)+" ms", FmtMs(r.dist.P95Ms)+" ms", FmtMs(r.dist.MaxMs)+" ms", perVMI)
		for _, p := range r.phases {
			res.AddRow("· "+p.Name(), "", strconv.Itoa(p.Dist.Count), FmtMs(p.Dist.P50Ms)+" ms", FmtMs(p.Dist.P95Ms)+" ms", FmtMs(p.Dist.MaxMs)+" ms", "")
		}
		if r.failure != "" {
			res.Note("%s: %s", n.label, r.failure)
		}
		if r.stuck != "" {
			res.Note("%s: not %s: %s", n.label, n.phase, r.stuck)
		}
		if r.waited != "" {
			res.Note("%s: launcher pods %s", n.label, r.waited)
		}
		if n.phase == "Running" {
			res.Note("%s: the machine's CPUs were %.0f%% busy from the first create until the last Running (%.1f CPU-s, %.1f per VM; %.0f%% of the time stolen by the hypervisor)",
				n.label, 100*r.cpuBusy, r.cpuSeconds, r.cpuSeconds/float64(n.n*n.repeat), 100*r.cpuStolen)
		}
		switch n.goal {
		case "p50 ≤ 1 s":
			res.Targets = append(res.Targets, NewCheck(n.label, n.goal, FmtMs(r.dist.P50Ms)+" ms", r.reached == n.n*n.repeat && r.dist.P50Ms <= 1000))
		case "p95 ≤ 10 s":
			res.Targets = append(res.Targets, NewCheck(n.label, n.goal, FmtMs(r.dist.P95Ms)+" ms", r.reached == n.n*n.repeat && r.dist.P95Ms <= 10000))
		}
		records = append(records, map[string]any{"measurement": n.label, "vms": n.n * n.repeat, "phase": n.phase, "reached": r.reached,
			"latency": r.dist, "kubevirtWrites": r.writes, "podWrites": r.pods, "phases": r.phases, "milestonesMs": r.vms,
			"cpuBusy": r.cpuBusy, "cpuSeconds": r.cpuSeconds, "cpuStolen": r.cpuStolen})
	}
	return res, nil
}

// trailingWriteCounters reads the write counters once the status writes of the same phase are
// done: 1 s after the last VMI reached it, sampled every 100 ms, keeping the last sample taken
// before a VMI went past the phase (pastPhase), whose writes (a node that starts a VM in less
// than a second writes Running within that second) belong to the next phase.
func trailingWriteCounters(ctx context.Context, e *Env, pastPhase func() bool) (map[string]float64, float64, error) {
	kv, pods, err := writeCounters(ctx, e)
	if err != nil {
		return nil, 0, err
	}
	for end := time.Now().Add(time.Second); time.Now().Before(end) && !pastPhase(); {
		time.Sleep(100 * time.Millisecond)
		nkv, npods, err := writeCounters(ctx, e)
		if err != nil {
			return nil, 0, err
		}
		if pastPhase() {
			break // this sample may hold the next phase's first write
		}
		kv, pods = nkv, npods
	}
	return kv, pods, nil
}

// Before each measurement the machine may still be tearing down the previous one's pods (the
// kubelet's clean-up of 100 launcher pods goes on after they left the API): wait until less than
// settleBusy of the CPU time of one second was busy, at most settleWait. The local cluster idles
// at 2–6% (one demo guest under TCG included); half the machine, the earlier threshold, let a
// burst start while the kubelet still tore down a previous measurement's pods.
const (
	settleBusy = 0.2
	settleWait = 30 * time.Second
)

// settle waits until the machine's CPUs were less than busy busy over one second, at most for
// wait; it returns the last second's busy share and whether it got below busy.
func settle(ctx context.Context, busy float64, wait time.Duration) (float64, bool) {
	deadline := time.Now().Add(wait)
	last := 0.0
	for {
		before := ReadCPUTimes()
		select {
		case <-ctx.Done():
			return last, false
		case <-time.After(time.Second):
		}
		last = before.BusyFraction(ReadCPUTimes())
		if last < busy {
			return last, true
		}
		if time.Now().After(deadline) {
			return last, false
		}
	}
}

// startVMs creates n small VMs interval apart, waits until each VMI reached phase (or failed),
// counts the API writes meanwhile, then deletes the VMs and waits until their VMIs are gone.
// deleteEarly deletes each VM as soon as its VMI reached phase; the writes are then not counted
// (the deletions' writes would be mixed in). paused starts the guests with paused vCPUs
// (startStrategy Paused). Watches on the VMIs and the launcher pods, and for
// phase Running the launchers' and node agents' logs, give each start's milestones.
func startVMs(ctx context.Context, e *Env, ns, prefix string, n int, interval time.Duration, phase string, deleteEarly, paused bool) (startRun, error) {
	var out startRun
	c, err := NewWatchClient(e.Kube)
	if err != nil {
		return out, err
	}
	vmis := c.Resource(VMIResource).Namespace(ns)
	vms := c.Resource(VMResource).Namespace(ns)
	pods := c.Resource(podResource).Namespace(ns)
	l, err := vmis.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return out, err
	}
	w, err := vmis.Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
	if err != nil {
		return out, err
	}
	defer w.Stop()
	launcherPods := metav1.ListOptions{LabelSelector: kubevirtv1.AppLabel + "=" + launcherpod.LauncherLabelValue}
	pl, err := pods.List(ctx, launcherPods)
	if err != nil {
		return out, err
	}
	launcherPods.ResourceVersion = pl.GetResourceVersion()
	pw, err := pods.Watch(ctx, launcherPods)
	if err != nil {
		return out, err
	}
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

	var mu sync.Mutex
	tls := map[string]*timeline{}
	launchers := map[string]*corev1.Pod{} // the last state of each VM's launcher pod
	reached := map[string]time.Duration{}
	failed := map[string]string{}
	// past: a VMI was seen beyond the measured phase (the node side's writes begin).
	past := false
	done := make(chan struct{})
	var doneOnce sync.Once
	go func() {
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
			mu.Lock()
			if tl, ok := tls[pod.Labels[launcherpod.VMINameLabel]]; ok {
				tl.observePod(&pod, now)
				launchers[pod.Labels[launcherpod.VMINameLabel]] = &pod
			}
			mu.Unlock()
		}
	}()
	go func() {
		// Watches on after every VMI reached the phase, to see the first one go past it.
		defer doneOnce.Do(func() { close(done) })
		for ev := range w.ResultChan() {
			now := time.Now()
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
				continue
			}
			p, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			mu.Lock()
			tl, ok := tls[u.GetName()]
			if ok {
				tl.observeVMIPhase(p, now)
				if phaseRank[p] > phaseRank[phase] {
					past = true
				}
			}
			if _, seen := reached[u.GetName()]; ok && !seen {
				if p == "Failed" {
					reason, _, _ := unstructured.NestedString(u.Object, "status", "reason")
					failed[u.GetName()] = reason
				} else if phaseRank[p] >= phaseRank[phase] {
					reached[u.GetName()] = now.Sub(tl.at[msCreated])
					if deleteEarly {
						go func(name string) { _ = vms.Delete(ctx, name, metav1.DeleteOptions{}) }(u.GetName())
					}
				}
			}
			all := len(reached)+len(failed) == n
			mu.Unlock()
			if all {
				doneOnce.Do(func() { close(done) })
			}
		}
	}()
	first, cpuBefore := time.Now(), ReadCPUTimes()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%03d", prefix, i)
		o, err := smallVMObject(ns, name)
		if err != nil {
			return out, err
		}
		if paused {
			if err := unstructured.SetNestedField(o.Object, "Paused", "spec", "template", "spec", "startStrategy"); err != nil {
				return out, err
			}
		}
		mu.Lock()
		tls[name] = &timeline{}
		tls[name].see(msCreated, time.Now())
		mu.Unlock()
		if _, err := vms.Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return out, fmt.Errorf("create VM %s: %w", name, err)
		}
		if interval > 0 && i < n-1 {
			time.Sleep(interval)
		}
	}
	timeout := 90*time.Second + time.Duration(n)*(interval+time.Second)
	select {
	case <-done:
	case <-time.After(timeout):
		out.failure = fmt.Sprintf("timed out after %s", timeout)
	case <-ctx.Done():
		return out, ctx.Err()
	}
	cpuAfter := ReadCPUTimes()
	out.cpuBusy = cpuBefore.BusyFraction(cpuAfter)
	out.cpuStolen = cpuBefore.StealFraction(cpuAfter)
	out.cpuSeconds = float64(cpuAfter.Busy-cpuBefore.Busy) / clockTicks
	afterKV, afterPods, err := trailingWriteCounters(ctx, e, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return past
	})
	if err != nil {
		return out, err
	}
	chain := scheduledChain
	if phase == "Running" {
		chain = runningChain
	}
	mu.Lock()
	if phase == "Running" {
		logMilestones(ctx, e, ns, first.Add(-2*time.Second), launchers, tls)
	}
	ds := make([]time.Duration, 0, len(reached))
	for _, d := range reached {
		ds = append(ds, d)
	}
	if len(failed) > 0 {
		out.failure += fmt.Sprintf(" %d VMIs Failed (%s)", len(failed), failureReasons(ctx, e, ns, failed))
	}
	all := make([]*timeline, 0, len(tls))
	out.vms = map[string]map[string]float64{}
	for name, tl := range tls {
		all = append(all, tl)
		out.vms[name] = tl.offsets()
	}
	out.timelines, out.chain, out.durations = all, chain, ds
	mu.Unlock()
	out.summarize()
	if !deleteEarly {
		out.writes = Delta(beforeKV, afterKV)
		out.writes["virtualmachines"] -= float64(n)
		out.pods = afterPods - beforePods
	}

	// Clean up before the next measurement.
	if err := vms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return out, err
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := vmis.List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil && len(l.Items) == 0, nil
	})
	if err != nil {
		return out, fmt.Errorf("VMIs of %s still there 5 min after their VMs were deleted", ns)
	}
	return out, nil
}

// logMilestones adds the milestones found in the logs of the launcher pods (by VM name) and of
// the node agents of their nodes, written since then, to the timelines. A log that cannot be
// read leaves its milestones unseen.
func logMilestones(ctx context.Context, e *Env, ns string, since time.Time, pods map[string]*corev1.Pod, tls map[string]*timeline) {
	nodes := map[string]bool{}
	for vm, pod := range pods {
		if pod.Spec.NodeName != "" {
			nodes[pod.Spec.NodeName] = true
		}
		b, err := e.KubeClient.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{
			Container: launcherpod.ComputeContainerName, Timestamps: true,
		}).DoRaw(ctx)
		if err != nil {
			continue
		}
		started, ready := launcherMilestones(b)
		tls[vm].see(msLauncher, started)
		tls[vm].see(msLibvirt, ready)
	}
	agents, err := e.KubeClient.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=" + handlerName,
	})
	if err != nil {
		return
	}
	sinceTime := metav1.NewTime(since)
	for _, a := range agents.Items {
		if !nodes[a.Spec.NodeName] || len(a.Spec.Containers) == 0 {
			continue
		}
		b, err := e.KubeClient.CoreV1().Pods(a.Namespace).GetLogs(a.Name, &corev1.PodLogOptions{
			Container: a.Spec.Containers[0].Name, Timestamps: true, SinceTime: &sinceTime,
		}).DoRaw(ctx)
		if err != nil {
			continue
		}
		for key, m := range agentMilestones(b) {
			vmNS, vm, ok := strings.Cut(key, "/")
			if tl := tls[vm]; ok && vmNS == ns && tl != nil {
				tl.see(msAttached, m[0])
				tl.see(msDomain, m[1])
			}
		}
	}
}

// writeCounters reads nativevirt-apiserver's kubevirt.io writes by resource and kube-apiserver's
// pod writes.
func writeCounters(ctx context.Context, e *Env) (map[string]float64, float64, error) {
	b, err := GetRaw(ctx, e.Direct, "/metrics")
	if err != nil {
		return nil, 0, fmt.Errorf("nativevirt-apiserver metrics: %w", err)
	}
	s, err := ParseMetrics(b)
	if err != nil {
		return nil, 0, err
	}
	kb, err := GetRaw(ctx, e.Kube, "/metrics")
	if err != nil {
		return nil, 0, fmt.Errorf("kube-apiserver metrics: %w", err)
	}
	ks, err := ParseMetrics(kb)
	if err != nil {
		return nil, 0, err
	}
	return WritesByResource(s, "kubevirt.io"), WritesByResource(ks, "")["pods"] + WritesByResource(ks, "")["pods/binding"] + WritesByResource(ks, "")["pods/status"], nil
}
