package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// milestone is a moment of one VM's start that the control-plane suite sees: from watch events
// (the client's clock at receipt), or from the timestamped container logs of the launcher and
// the node agent (the container runtime's clock at the line's arrival; the same machine's clock
// here).
type milestone int

// The milestones, in the order a start normally passes them.
const (
	// msCreated: the benchmark sent the VM's create.
	msCreated milestone = iota
	// msVMI: the VMI's ADDED event (VM controller).
	msVMI
	// msPod: the launcher pod's ADDED event (VMI controller).
	msPod
	// msBound: the pod with spec.nodeName (kube-scheduler).
	msBound
	// msScheduled: the VMI in phase Scheduled or later (VMI controller).
	msScheduled
	// msInitialized: the pod's Initialized=True condition (kubelet). The launcher pod has no init
	// containers (its disks are copied beside the launcher): the kubelet has taken the pod up.
	msInitialized
	// msLauncher: the launcher's first log line ("Starting"): its container runs.
	msLauncher
	// msLibvirt: the launcher's "Ready" line: libvirtd answers, the ready marker is written.
	msLibvirt
	// msAttached: the node agent's "Attached to launcher" line.
	msAttached
	// msDomain: the node agent's "Domain started" line: defined and started in libvirt.
	msDomain
	// msRunning: the VMI in phase Running (node agent's status write).
	msRunning
	// msPodReady: the pod's Ready=True condition (no readiness probe: the launcher container
	// started, as the kubelet noticed). Not part of a chain: it races msLibvirt.
	msPodReady
	numMilestones
)

var milestoneNames = [numMilestones]string{
	"created", "VMI created", "pod created", "pod bound", "VMI Scheduled", "pod initialized",
	"launcher started", "libvirtd ready", "agent attached", "domain started", "VMI Running", "pod Ready",
}

func (m milestone) String() string { return milestoneNames[m] }

// scheduledChain and runningChain are the milestones whose consecutive differences are the
// phases reported for a start measured until Scheduled, or until Running.
var (
	scheduledChain = []milestone{msCreated, msVMI, msPod, msBound, msScheduled}
	runningChain   = []milestone{msCreated, msVMI, msPod, msBound, msInitialized, msLauncher, msLibvirt,
		msAttached, msDomain, msRunning}
)

// timeline records when one VM passed each milestone (zero: not seen).
type timeline struct {
	at [numMilestones]time.Time
	// unschedulable is the scheduler's last PodScheduled=False message for the launcher pod
	// while it is not bound; waited the first such message, kept after the pod was bound.
	unschedulable, waited string
	// agentSteps are the node agent's own durations of the start (agentStepNames), from its
	// "Domain started" line; zero when not found.
	agentSteps [3]time.Duration
	// libvirtdAnswers is the launcher's "libvirtd answers" line: between msLauncher and
	// msLibvirt, the rest of which is the wait for the disk copies.
	libvirtdAnswers time.Time
}

// agentStepNames are the steps the node agent's "Domain started" line times: preparing the disks,
// the pod network, the domain XML and the capability cache; libvirt's define; libvirt's start.
var agentStepNames = [3]string{"prepare", "define", "start"}

// see records m at t unless it was seen before.
func (tl *timeline) see(m milestone, t time.Time) {
	if tl.at[m].IsZero() && !t.IsZero() {
		tl.at[m] = t
	}
}

// observeVMIPhase records the milestones a VMI in phase implies.
func (tl *timeline) observeVMIPhase(phase string, now time.Time) {
	tl.see(msVMI, now)
	if phaseRank[phase] >= phaseRank["Scheduled"] {
		tl.see(msScheduled, now)
	}
	if phaseRank[phase] >= phaseRank["Running"] {
		tl.see(msRunning, now)
	}
}

// observePod records the milestones the launcher pod's state implies.
func (tl *timeline) observePod(pod *corev1.Pod, now time.Time) {
	tl.see(msPod, now)
	if pod.Spec.NodeName != "" {
		tl.see(msBound, now)
		tl.unschedulable = ""
	}
	for _, c := range pod.Status.Conditions {
		switch {
		case c.Type == corev1.PodInitialized && c.Status == corev1.ConditionTrue:
			tl.see(msInitialized, now)
		case c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue:
			tl.see(msPodReady, now)
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && pod.Spec.NodeName == "":
			tl.unschedulable = strings.TrimSpace(c.Message)
			if tl.waited == "" {
				tl.waited = tl.unschedulable
			}
		}
	}
}

// last is the latest milestone of chain that tl has seen, or -1.
func (tl *timeline) last(chain []milestone) milestone {
	out := milestone(-1)
	for _, m := range chain {
		if !tl.at[m].IsZero() {
			out = m
		}
	}
	return out
}

// offsets are the milestones seen, in milliseconds since the create (for the JSON records).
func (tl *timeline) offsets() map[string]float64 {
	out := map[string]float64{}
	for m := msVMI; m < numMilestones; m++ {
		if !tl.at[m].IsZero() && !tl.at[msCreated].IsZero() {
			out[m.String()] = ms(tl.at[m].Sub(tl.at[msCreated]))
		}
	}
	return out
}

// PhaseStat is the distribution of one phase of the starts: the time from one milestone to the
// next, over the VMs that passed both.
type PhaseStat struct {
	From string `json:"from"`
	To   string `json:"to"`
	Dist Dist   `json:"latency"`
}

// Name is "from → to".
func (p PhaseStat) Name() string { return p.From + " → " + p.To }

// phaseStats computes the phases of chain over the timelines. A VM that did not pass both ends
// of a phase counts as an error of that phase's Dist.
func phaseStats(tls []*timeline, chain []milestone) []PhaseStat {
	var out []PhaseStat
	for i := 1; i < len(chain); i++ {
		from, to := chain[i-1], chain[i]
		var ds []time.Duration
		missing := 0
		for _, tl := range tls {
			a, b := tl.at[from], tl.at[to]
			if a.IsZero() || b.IsZero() {
				missing++
				continue
			}
			ds = append(ds, b.Sub(a))
		}
		out = append(out, PhaseStat{From: from.String(), To: to.String(), Dist: Summarize(ds, 0, missing)})
	}
	return out
}

// whereStuck explains the VMs that did not reach the chain's end: how many stopped after which
// milestone, and the scheduler's message for unschedulable launcher pods, e.g.
// "3 unschedulable (0/1 nodes are available: 1 Insufficient cpu.)". Empty when all reached it.
func whereStuck(tls []*timeline, chain []milestone) string {
	end := chain[len(chain)-1]
	counts := map[string]int{}
	for _, tl := range tls {
		if !tl.at[end].IsZero() {
			continue
		}
		why := "never created"
		if tl.unschedulable != "" {
			why = "unschedulable (" + tl.unschedulable + ")"
		} else if m := tl.last(chain); m >= 0 {
			why = "last seen: " + m.String()
		}
		counts[why]++
	}
	var parts []string
	for why, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, why))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// waitedForRoom counts the launcher pods the scheduler could not place at first, by its message
// ("2 at first unschedulable (0/1 nodes are available: 1 Insufficient cpu.)"); empty when none.
func waitedForRoom(tls []*timeline) string {
	counts := map[string]int{}
	for _, tl := range tls {
		if tl.waited != "" {
			counts[tl.waited]++
		}
	}
	var parts []string
	for msg, n := range counts {
		parts = append(parts, fmt.Sprintf("%d at first unschedulable (%s)", n, msg))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// logLine is one line of a container log read with timestamps.
type logLine struct {
	at   time.Time
	text string
}

// parseTimestampedLog splits a container log read with timestamps=true (each line an RFC 3339
// timestamp, a space, the line as the container wrote it); lines without a timestamp are skipped.
func parseTimestampedLog(b []byte) []logLine {
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		ts, text, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			continue
		}
		out = append(out, logLine{at: at, text: text})
	}
	return out
}

// launcherMilestones finds in a launcher's log when it started ("Starting") and when libvirtd
// answered ("Ready"); zero times when not found.
func launcherMilestones(log []byte) (started, ready time.Time) {
	for _, l := range parseTimestampedLog(log) {
		switch {
		case started.IsZero() && strings.Contains(l.text, `] "Starting"`):
			started = l.at
		case ready.IsZero() && strings.Contains(l.text, `] "Ready"`):
			ready = l.at
		}
	}
	return started, ready
}

// libvirtdAnswered finds in a launcher's log when libvirtd first answered ("libvirtd answers");
// zero when not found.
func libvirtdAnswered(log []byte) time.Time {
	for _, l := range parseTimestampedLog(log) {
		if strings.Contains(l.text, `] "libvirtd answers"`) {
			return l.at
		}
	}
	return time.Time{}
}

// agentVMIKey finds the VMI a node agent log line is about (klog's vmi="namespace/name").
var agentVMIKey = regexp.MustCompile(`\bvmi="([^"]+)"`)

// agentStepValue finds one of the durations of a "Domain started" line (prepare="5ms").
var agentStepValue = regexp.MustCompile(`\b(prepare|define|start)="([^"]+)"`)

// agentStartSteps finds in the node agent's log, per VMI key, the durations of its first
// "Domain started" line (agentStepNames).
func agentStartSteps(log []byte) map[string][3]time.Duration {
	out := map[string][3]time.Duration{}
	for _, l := range parseTimestampedLog(log) {
		if !strings.Contains(l.text, `] "Domain started"`) {
			continue
		}
		m := agentVMIKey.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		if _, seen := out[m[1]]; seen {
			continue
		}
		var steps [3]time.Duration
		for _, kv := range agentStepValue.FindAllStringSubmatch(l.text, -1) {
			d, err := time.ParseDuration(kv[2])
			if err != nil {
				continue
			}
			for i, n := range agentStepNames {
				if n == kv[1] {
					steps[i] = d
				}
			}
		}
		out[m[1]] = steps
	}
	return out
}

// agentMilestones finds in the node agent's log, per VMI key (namespace/name), when the agent
// attached to its launcher and when it started its domain (first occurrence of each).
func agentMilestones(log []byte) map[string][2]time.Time {
	out := map[string][2]time.Time{}
	for _, l := range parseTimestampedLog(log) {
		i := -1
		switch {
		case strings.Contains(l.text, `] "Attached to launcher"`):
			i = 0
		case strings.Contains(l.text, `] "Domain started"`):
			i = 1
		}
		if i < 0 {
			continue
		}
		m := agentVMIKey.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		v := out[m[1]]
		if v[i].IsZero() {
			v[i] = l.at
		}
		out[m[1]] = v
	}
	return out
}
