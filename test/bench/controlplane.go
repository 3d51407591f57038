package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// cpMeasurement is one row of the control-plane suite: n VMs started until phase.
type cpMeasurement struct {
	label string
	n     int
	phase string
	goal  string
	// repeat runs the measurement that many times, one after the other.
	repeat int
	// interval is how far apart the VMs are created (0: at once).
	interval time.Duration
	// paused starts the guests with paused vCPUs (startStrategy Paused): the VMI is Running
	// once its domain started, and no guest boots meanwhile.
	paused bool
	// countsWrites: the row has a target on the API writes per VMI start.
	countsWrites bool
	// scheduledBurst: with the node agent every Scheduled VMI goes on to boot a guest, so this
	// burst deletes each VM once measured, and the node is not asked to run them all at once.
	scheduledBurst bool
}

// controlPlaneMeasurements are the rows cfg asks for.
func controlPlaneMeasurements(cfg ControlPlaneConfig) []cpMeasurement {
	singles := max(1, cfg.SingleStarts)
	ms := []cpMeasurement{
		{label: "create → Scheduled, 1 VM", n: 1, phase: "Scheduled", repeat: 1, countsWrites: true},
		{label: fmt.Sprintf("create → Scheduled, %d VMs %s apart", cfg.Burst, cfg.Interval), n: cfg.Burst, phase: "Scheduled",
			repeat: 1, interval: cfg.Interval, countsWrites: true, scheduledBurst: true},
		{label: fmt.Sprintf("create → Running, 1 VM on a warm node, %d times", singles), n: 1, phase: "Running", goal: "p50 ≤ 1 s", repeat: singles},
		{label: fmt.Sprintf("create → Running, burst of %d", cfg.RunningBurst), n: cfg.RunningBurst, phase: "Running", goal: "p95 ≤ 10 s", repeat: 1},
	}
	if cfg.PausedBurst {
		// Not a target: the same burst without the guests' boots, which under TCG emulation
		// take most of the machine's CPU (with KVM a boot costs a fraction of it). What is left
		// is NativeVirt's, the kubelet's and the container runtime's.
		ms = append(ms, cpMeasurement{label: fmt.Sprintf("create → Running, burst of %d, guests paused", cfg.RunningBurst),
			n: cfg.RunningBurst, phase: "Running", repeat: 1, paused: true})
	}
	return ms
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
	ms := controlPlaneMeasurements(cfg)
	ctrlOK, why := e.controllerReady(ctx)
	handlerOK, whyHandler := e.handlerReady(ctx)
	if ctrlOK {
		ctrlOK, why = e.schedulableNode(ctx)
	}
	if ctrlOK && handlerOK {
		if err := e.waitForDevices(ctx); err != nil {
			res.Note("no schedulable node offers %s after a minute: launcher pods may wait for the scheduler's back-off", tunResource)
		}
	}
	if !ctrlOK {
		for _, m := range ms {
			skipMeasurement(res, m, why)
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
	if err := warmUp(ctx, e, ns, run, handlerOK); err != nil {
		return res, err
	}
	for i, m := range ms {
		if m.phase == "Running" && !handlerOK {
			skipMeasurement(res, m, whyHandler)
			continue
		}
		r, err := repeatStarts(ctx, e, res, m, startOptions{ns: ns, prefix: fmt.Sprintf("cp%d-%d", run, i),
			n: m.n, interval: m.interval, phase: m.phase, deleteEarly: m.scheduledBurst && handlerOK, paused: m.paused})
		if err != nil {
			return res, err
		}
		records = append(records, reportMeasurement(res, m, r))
	}
	return res, nil
}

// skipMeasurement adds m's row, and its targets, as skipped for reason.
func skipMeasurement(res *Result, m cpMeasurement, reason string) {
	res.AddRow(m.label, strconv.Itoa(m.n), "skipped: "+reason, "-", "-", "-", "-")
	if m.goal != "" {
		res.Targets = append(res.Targets, Skipped(m.label, m.goal, "skipped"))
	}
	if m.countsWrites {
		res.Targets = append(res.Targets, Skipped(m.label+": API writes per VMI start", "≤ 3", "skipped"))
	}
}

// warmUp starts and deletes a VM before the measurements. A controller that has just been
// (re)deployed is ready before its informers have listed the VMs (the first VM waited 1.6 s for
// that), and a first start on the node loads the launcher and disk images into containerd's
// cache; the measured starts are the later ones.
func warmUp(ctx context.Context, e *Env, ns string, run int64, handlerOK bool) error {
	warm := "Scheduled"
	if handlerOK {
		warm = "Running"
	}
	e.Logf("control-plane: warm-up (one VM to %s)", warm)
	_, err := startVMs(ctx, e, startOptions{ns: ns, prefix: fmt.Sprintf("warm%d", run), n: 1, phase: warm})
	return err
}

// repeatStarts runs m.repeat times startVMs with o (each run's names suffixed with its number),
// each once the machine settled, and merges the runs.
func repeatStarts(ctx context.Context, e *Env, res *Result, m cpMeasurement, o startOptions) (startRun, error) {
	prefix := o.prefix
	var runs []startRun
	for k := 0; k < m.repeat; k++ {
		if busy, ok := settle(ctx, settleBusy, settleWait); !ok {
			res.Note("%s: the CPUs were still %.0f%% busy after %s of waiting for the previous measurement's pods to go", m.label, 100*busy, settleWait)
		}
		e.Logf("control-plane: %s (%d of %d)", m.label, k+1, m.repeat)
		o.prefix = fmt.Sprintf("%s-%d", prefix, k)
		r, err := startVMs(ctx, e, o)
		if err != nil {
			return r, err
		}
		runs = append(runs, r)
	}
	if len(runs) == 1 {
		return runs[0], nil
	}
	return mergeRuns(runs), nil
}

// reportMeasurement adds m's rows, notes and targets for r to res and returns its record.
func reportMeasurement(res *Result, m cpMeasurement, r startRun) map[string]any {
	vms := m.n * m.repeat
	perVMI := "-"
	if m.phase == "Scheduled" && r.reached > 0 && r.writes != nil {
		total := 0.0
		for _, v := range r.writes {
			total += v
		}
		w := total / float64(m.n)
		perVMI = fmt.Sprintf("%.1f (+%.1f pod)", w, r.pods/float64(m.n))
		res.Targets = append(res.Targets, NewCheck(m.label+": API writes per VMI start", "≤ 3", fmt.Sprintf("%.1f", w), w <= 3))
	}
	res.AddRow(m.label, strconv.Itoa(vms), fmt.Sprintf("%d", r.reached), FmtMs(r.dist.P50Ms)+" ms", FmtMs(r.dist.P95Ms)+" ms", FmtMs(r.dist.MaxMs)+" ms", perVMI)
	for _, p := range r.phases {
		res.AddRow("· "+p.Name(), "", strconv.Itoa(p.Dist.Count), FmtMs(p.Dist.P50Ms)+" ms", FmtMs(p.Dist.P95Ms)+" ms", FmtMs(p.Dist.MaxMs)+" ms", "")
		if p.To == msLibvirt.String() {
			for i, d := range launcherStepDists(r.timelines) {
				res.AddRow("  · "+launcherStepNames[i], "", strconv.Itoa(d.Count), FmtMs(d.P50Ms)+" ms", FmtMs(d.P95Ms)+" ms", FmtMs(d.MaxMs)+" ms", "")
			}
		}
		if p.To == msDomain.String() {
			for i, d := range agentStepDists(r.timelines) {
				res.AddRow("  · the agent's "+agentStepNames[i], "", strconv.Itoa(d.Count), FmtMs(d.P50Ms)+" ms", FmtMs(d.P95Ms)+" ms", FmtMs(d.MaxMs)+" ms", "")
			}
		}
	}
	if r.failure != "" {
		res.Note("%s: %s", m.label, r.failure)
	}
	if r.stuck != "" {
		res.Note("%s: not %s: %s", m.label, m.phase, r.stuck)
	}
	if r.waited != "" {
		res.Note("%s: launcher pods %s", m.label, r.waited)
	}
	if m.phase == "Running" {
		res.Note("%s: the machine's CPUs were %.0f%% busy from the first create until the last Running (%.1f CPU-s, %.1f per VM; %.0f%% of the time stolen by the hypervisor)",
			m.label, 100*r.cpuBusy, r.cpuSeconds, r.cpuSeconds/float64(vms), 100*r.cpuStolen)
	}
	switch m.goal {
	case "p50 ≤ 1 s":
		res.Targets = append(res.Targets, NewCheck(m.label, m.goal, FmtMs(r.dist.P50Ms)+" ms", r.reached == vms && r.dist.P50Ms <= 1000))
	case "p95 ≤ 10 s":
		res.Targets = append(res.Targets, NewCheck(m.label, m.goal, FmtMs(r.dist.P95Ms)+" ms", r.reached == vms && r.dist.P95Ms <= 10000))
	}
	return map[string]any{"measurement": m.label, "vms": vms, "phase": m.phase, "reached": r.reached,
		"latency": r.dist, "kubevirtWrites": r.writes, "podWrites": r.pods, "phases": r.phases, "milestonesMs": r.vms,
		"cpuBusy": r.cpuBusy, "cpuSeconds": r.cpuSeconds, "cpuStolen": r.cpuStolen}
}

// launcherStepNames split launcher started → libvirtd ready at the launcher's "libvirtd
// answers" line.
var launcherStepNames = [2]string{"launcher started → libvirtd answers", "libvirtd answers → disks copied, ready"}

// launcherStepDists are the distributions of the two parts of launcher started → libvirtd ready
// (launcherStepNames) over the timelines with all three times; none when none has them.
func launcherStepDists(tls []*timeline) []Dist {
	var steps [2][]time.Duration
	for _, tl := range tls {
		started, answers, ready := tl.at[msLauncher], tl.libvirtdAnswers, tl.at[msLibvirt]
		if started.IsZero() || answers.IsZero() || ready.IsZero() {
			continue
		}
		steps[0] = append(steps[0], answers.Sub(started))
		steps[1] = append(steps[1], ready.Sub(answers))
	}
	if len(steps[0]) == 0 {
		return nil
	}
	return []Dist{Summarize(steps[0], 0, 0), Summarize(steps[1], 0, 0)}
}

// agentStepDists are the distributions of the node agent's start steps (agentStepNames) over
// the timelines whose "Domain started" line gave them; none when no line did.
func agentStepDists(tls []*timeline) []Dist {
	var steps [3][]time.Duration
	for _, tl := range tls {
		if tl.agentSteps == ([3]time.Duration{}) {
			continue
		}
		for i, d := range tl.agentSteps {
			steps[i] = append(steps[i], d)
		}
	}
	if len(steps[0]) == 0 {
		return nil
	}
	out := make([]Dist, len(steps))
	for i, s := range steps {
		out[i] = Summarize(s, 0, 0)
	}
	return out
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
		tls[vm].libvirtdAnswers = libvirtdAnswered(b)
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
		for key, steps := range agentStartSteps(b) {
			vmNS, vm, ok := strings.Cut(key, "/")
			if tl := tls[vm]; ok && vmNS == ns && tl != nil {
				tl.agentSteps = steps
			}
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
