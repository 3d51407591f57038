package migration

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// outcome is what a test compares of a plan.
type outcome struct {
	Phase         kubevirtv1.VirtualMachineInstanceMigrationPhase
	FailReason    string
	Create        bool
	DeleteTargets []string
	DeleteSource  string
	// WriteState with State nil: the instance's migrationState is cleared.
	WriteState    bool
	State         *kubevirtv1.VirtualMachineInstanceMigrationState
	NodeName      string
	AddFinalizer  bool
	DropFinalizer bool
	Conditions    []kubevirtv1.VirtualMachineInstanceMigrationConditionType
	RequeueAfter  time.Duration
	EventReasons  []string
}

func summarize(p plan) outcome {
	o := outcome{Phase: p.phase, FailReason: p.failReason, Create: p.createTarget, WriteState: p.writeState, State: p.state,
		NodeName: p.nodeName, AddFinalizer: p.addFinalizer, DropFinalizer: p.removeFinalizer, RequeueAfter: p.requeueAfter}
	for _, t := range p.deleteTargets {
		o.DeleteTargets = append(o.DeleteTargets, t.Name)
	}
	if p.deleteSource != nil {
		o.DeleteSource = p.deleteSource.Name
	}
	for _, c := range p.setConditions {
		o.Conditions = append(o.Conditions, c.Type)
	}
	for _, e := range p.events {
		r := e.reason
		if e.onVMI {
			r = "vmi:" + r
		}
		o.EventReasons = append(o.EventReasons, r)
	}
	return o
}

func withState(mutate ...func(*kubevirtv1.VirtualMachineInstanceMigrationState)) *kubevirtv1.VirtualMachineInstanceMigrationState {
	ms := handedOff()
	for _, m := range mutate {
		m(ms)
	}
	return ms
}

// failedByController is the migrationState the controller ends when the transfer never started.
func failedByController(reason string) func(*kubevirtv1.VirtualMachineInstanceMigrationState) {
	return func(ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
		ms.Completed, ms.Failed, ms.FailureReason, ms.EndTimestamp = true, true, reason, at(0)
	}
}

func TestDecide(t *testing.T) {
	cfg := DefaultConfig()
	failedEvents := []string{EventFailedMigration, "vmi:" + EventFailedMigration}
	tests := []struct {
		name       string
		m          *kubevirtv1.VirtualMachineInstanceMigration
		vmi        *kubevirtv1.VirtualMachineInstance // nil: gone
		noVMI      bool
		pods       []*corev1.Pod
		other      string
		noCapacity string
		want       outcome
		wantMsg    string
	}{
		// Creation and the checks before it.
		{name: "new: target pod created", m: newMig(), vmi: newVMI(), pods: []*corev1.Pod{source()},
			want: outcome{Phase: kubevirtv1.MigrationScheduling, Create: true}},
		{name: "new without the finalizer: added", m: newMig(noFinalizer()), vmi: newVMI(), pods: []*corev1.Pod{source()},
			want: outcome{Phase: kubevirtv1.MigrationScheduling, Create: true, AddFinalizer: true}},
		{name: "no free slot: Pending", m: newMig(), vmi: newVMI(), pods: []*corev1.Pod{source()}, noCapacity: "5 migrations run",
			want: outcome{Phase: kubevirtv1.MigrationPending, RequeueAfter: capacityRetry}},
		{name: "pending, slot freed", m: newMig(phase(kubevirtv1.MigrationPending)), vmi: newVMI(), pods: []*corev1.Pod{source()},
			want: outcome{Phase: kubevirtv1.MigrationScheduling, Create: true}},
		{name: "instance not running", m: newMig(), vmi: newVMI(vmiPhase(kubevirtv1.Scheduled)),
			want:    outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonVMINotRunning, DropFinalizer: true, EventReasons: failedEvents},
			wantMsg: "Migration failed because the VMI is not running (phase Scheduled)."},
		{name: "not live-migratable", m: newMig(), vmi: newVMI(notMigratable()),
			want:    outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonNotLiveMigratable, DropFinalizer: true, EventReasons: failedEvents},
			wantMsg: "Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: volume data is a claim"},
		{name: "LiveMigratable not reported", m: newMig(), vmi: newVMI(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.Conditions = nil }),
			want:    outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonNotLiveMigratable, DropFinalizer: true, EventReasons: failedEvents},
			wantMsg: "has not reported the LiveMigratable condition"},
		{name: "another migration goes first", m: newMig(), vmi: newVMI(), other: "m0-uid",
			want:    outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonMigrationInProgress, DropFinalizer: true, EventReasons: failedEvents},
			wantMsg: "VMI is not eligible for migration because another migration job (m0-uid) is in progress."},
		{name: "instance gone", m: newMig(phase(kubevirtv1.MigrationScheduling)), noVMI: true, pods: []*corev1.Pod{target()},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonVMINotFound, DeleteTargets: []string{"target"}, DropFinalizer: true,
				EventReasons: []string{EventFailedMigration}}},
		{name: "instance stopped", m: newMig(phase(kubevirtv1.MigrationScheduled)), vmi: newVMI(vmiPhase(kubevirtv1.Succeeded), state()),
			pods: []*corev1.Pod{target(onNode("node-b"))},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonVMIStopped, DeleteTargets: []string{"target"}, DropFinalizer: true,
				WriteState: true, State: withState(failedByController("Migration failed: the VMI stopped (phase Succeeded) during the migration.")),
				EventReasons: failedEvents}},
		{name: "instance being deleted before the transfer", m: newMig(phase(kubevirtv1.MigrationScheduling)),
			vmi: newVMI(func(v *kubevirtv1.VirtualMachineInstance) { v.DeletionTimestamp = at(0) }), pods: []*corev1.Pod{source(), target()},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonVMIDeleted, DeleteTargets: []string{"target"}, DropFinalizer: true,
				EventReasons: failedEvents}},

		// Scheduling.
		{name: "target not bound yet", m: newMig(phase(kubevirtv1.MigrationScheduling)), vmi: newVMI(), pods: []*corev1.Pod{source(), target()},
			want: outcome{Phase: kubevirtv1.MigrationScheduling, RequeueAfter: cfg.PendingTimeout - 30*time.Second}},
		{name: "target unschedulable", m: newMig(phase(kubevirtv1.MigrationScheduling)), vmi: newVMI(),
			pods: []*corev1.Pod{source(), target(podUnschedulable("0/1 nodes are available"))},
			want: outcome{Phase: kubevirtv1.MigrationScheduling, Conditions: []kubevirtv1.VirtualMachineInstanceMigrationConditionType{ConditionTargetPodUnschedulable},
				RequeueAfter: cfg.UnschedulableTimeout - 30*time.Second}},
		{name: "target unschedulable too long", m: newMig(phase(kubevirtv1.MigrationScheduling)), vmi: newVMI(),
			pods: []*corev1.Pod{source(), target(podUnschedulable("0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."),
				podAge(cfg.UnschedulableTimeout))},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonTargetUnschedulable, DeleteTargets: []string{"target"}, DropFinalizer: true,
				Conditions:   []kubevirtv1.VirtualMachineInstanceMigrationConditionType{ConditionTargetPodUnschedulable},
				EventReasons: failedEvents},
			wantMsg: "could not be scheduled within 5m0s: 0/1 nodes are available: 1 node(s) didn't match"},
		{name: "target pending too long", m: newMig(phase(kubevirtv1.MigrationScheduling)), vmi: newVMI(),
			pods: []*corev1.Pod{source(), target(podAge(cfg.PendingTimeout))},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonTargetTimeout, DeleteTargets: []string{"target"}, DropFinalizer: true,
				EventReasons: failedEvents}},
		{name: "target of unknown age: no timeout", m: newMig(phase(kubevirtv1.MigrationScheduling)), vmi: newVMI(),
			pods: []*corev1.Pod{source(), target(func(p *corev1.Pod) { p.CreationTimestamp = metav1.Time{} })},
			want: outcome{Phase: kubevirtv1.MigrationScheduling}},
		{name: "target bound: handoff", m: newMig(phase(kubevirtv1.MigrationScheduling)), vmi: newVMI(),
			pods: []*corev1.Pod{source(), target(onNode("node-b"))},
			want: outcome{Phase: kubevirtv1.MigrationScheduled, WriteState: true, State: handedOff(), EventReasons: []string{EventSuccessfulHandOver}}},
		{name: "target bound and running: handoff into PreparingTarget", m: newMig(phase(kubevirtv1.MigrationScheduling)), vmi: newVMI(),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())},
			want: outcome{Phase: kubevirtv1.MigrationPreparingTarget, WriteState: true, State: handedOff(), EventReasons: []string{EventSuccessfulHandOver}}},
		{name: "handoff replaces a finished migration's state", m: newMig(phase(kubevirtv1.MigrationScheduling)),
			vmi: newVMI(func(v *kubevirtv1.VirtualMachineInstance) {
				v.Status.MigrationState = withState(transferDone)
				v.Status.MigrationState.MigrationUID = "m0-uid"
			}),
			pods: []*corev1.Pod{source(), target(onNode("node-b"))},
			want: outcome{Phase: kubevirtv1.MigrationScheduled, WriteState: true, State: handedOff(), EventReasons: []string{EventSuccessfulHandOver}}},
		{name: "target on the source node", m: newMig(phase(kubevirtv1.MigrationScheduling)), vmi: newVMI(),
			pods: []*corev1.Pod{source(), target(onNode("node-a"))},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonTargetOnSource, DropFinalizer: true, EventReasons: failedEvents}},
		{name: "target deleted while scheduling", m: newMig(phase(kubevirtv1.MigrationScheduling)), vmi: newVMI(), pods: []*corev1.Pod{source()},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonTargetGone, DropFinalizer: true, EventReasons: failedEvents}},
		{name: "target failed while scheduling", m: newMig(phase(kubevirtv1.MigrationScheduling)), vmi: newVMI(),
			pods: []*corev1.Pod{source(), target(podPhase(corev1.PodFailed))},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonTargetDown, DeleteTargets: []string{"target"}, DropFinalizer: true,
				EventReasons: failedEvents}},

		// Handed off: following the node agents.
		{name: "compute running: PreparingTarget", m: newMig(phase(kubevirtv1.MigrationScheduled)), vmi: newVMI(state()),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())}, want: outcome{Phase: kubevirtv1.MigrationPreparingTarget}},
		{name: "target address: TargetReady", m: newMig(phase(kubevirtv1.MigrationPreparingTarget)), vmi: newVMI(state(targetReady)),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())}, want: outcome{Phase: kubevirtv1.MigrationTargetReady}},
		{name: "start timestamp: Running", m: newMig(phase(kubevirtv1.MigrationTargetReady)), vmi: newVMI(state(transferStarted)),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())}, want: outcome{Phase: kubevirtv1.MigrationRunning}},
		{name: "phases never go back", m: newMig(phase(kubevirtv1.MigrationPreparingTarget)), vmi: newVMI(state()),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), podPhase(corev1.PodRunning))}, want: outcome{Phase: kubevirtv1.MigrationPreparingTarget}},
		{name: "completed, target has not seen the guest yet", m: newMig(phase(kubevirtv1.MigrationRunning)), vmi: newVMI(state(transferDone)),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())}, want: outcome{Phase: kubevirtv1.MigrationRunning}},
		{name: "completed and detected: handover", m: newMig(phase(kubevirtv1.MigrationRunning)), vmi: newVMI(state(transferDone, domainDetected)),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())},
			want: outcome{Phase: kubevirtv1.MigrationSucceeded, NodeName: "node-b", DropFinalizer: true,
				EventReasons: []string{"vmi:" + EventMigrated, EventSuccessfulMigration}}},
		{name: "handover already written", m: newMig(phase(kubevirtv1.MigrationRunning)),
			vmi:  newVMI(state(transferDone, domainDetected), func(v *kubevirtv1.VirtualMachineInstance) { v.Status.NodeName = "node-b" }),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())},
			want: outcome{Phase: kubevirtv1.MigrationSucceeded, DropFinalizer: true, EventReasons: []string{EventSuccessfulMigration}}},
		{name: "source reported failure", m: newMig(phase(kubevirtv1.MigrationRunning)), vmi: newVMI(state(transferFailed)),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonSourceFailed, DeleteTargets: []string{"target"}, DropFinalizer: true,
				EventReasons: failedEvents},
			wantMsg: "source node reported migration failed: migration job failed: connection reset"},
		{name: "target gone before the transfer", m: newMig(phase(kubevirtv1.MigrationTargetReady)), vmi: newVMI(state(targetReady)),
			pods: []*corev1.Pod{source()},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonTargetGone, DropFinalizer: true, WriteState: true,
				State:        withState(targetReady, failedByController("Migration target pod was removed during active migration.")),
				EventReasons: failedEvents}},
		{name: "target killed before the transfer", m: newMig(phase(kubevirtv1.MigrationPreparingTarget)), vmi: newVMI(state()),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), podPhase(corev1.PodFailed))},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonTargetDown, DeleteTargets: []string{"target"}, DropFinalizer: true,
				WriteState: true, State: withState(failedByController("Migration failed because target pod shutdown during migration")),
				EventReasons: failedEvents}},
		{name: "target killed during the transfer: abort, the source decides", m: newMig(phase(kubevirtv1.MigrationRunning)),
			vmi: newVMI(state(transferStarted)), pods: []*corev1.Pod{source(), target(onNode("node-b"), podDeleting())},
			want: outcome{Phase: kubevirtv1.MigrationRunning, WriteState: true,
				State:        withState(transferStarted, func(ms *kubevirtv1.VirtualMachineInstanceMigrationState) { ms.AbortRequested = true }),
				EventReasons: []string{EventSuccessfulAbort}}},
		{name: "target killed during the transfer, the source aborted", m: newMig(phase(kubevirtv1.MigrationRunning)),
			vmi: newVMI(state(transferFailed, func(ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
				ms.AbortRequested, ms.AbortStatus = true, kubevirtv1.MigrationAbortSucceeded
			})), pods: []*corev1.Pod{source()},
			want:    outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonTargetDown, DropFinalizer: true, EventReasons: failedEvents},
			wantMsg: "Migration failed because target pod shutdown during migration: the node agent aborted the transfer"},
		{name: "guest moved but the target pod died before detection", m: newMig(phase(kubevirtv1.MigrationRunning)), vmi: newVMI(state(transferDone)),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), podPhase(corev1.PodFailed))},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonTargetDown, DeleteTargets: []string{"target"}, DropFinalizer: true,
				EventReasons: failedEvents}},
		{name: "target pod still starting, within the timeout", m: newMig(phase(kubevirtv1.MigrationScheduled)), vmi: newVMI(state()),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), podAge(time.Minute))},
			want: outcome{Phase: kubevirtv1.MigrationScheduled, RequeueAfter: cfg.PendingTimeout - time.Minute}},

		// Cancel: deleting the migration.
		{name: "canceled while scheduling", m: newMig(phase(kubevirtv1.MigrationScheduling), migDeleting()), vmi: newVMI(),
			pods: []*corev1.Pod{source(), target()},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonCanceled, DeleteTargets: []string{"target"}, DropFinalizer: true,
				Conditions:   []kubevirtv1.VirtualMachineInstanceMigrationConditionType{kubevirtv1.VirtualMachineInstanceMigrationAbortRequested},
				EventReasons: failedEvents}},
		{name: "canceled after the handoff, before the transfer: state cleared", m: newMig(phase(kubevirtv1.MigrationTargetReady), migDeleting()),
			vmi: newVMI(state(targetReady)), pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonCanceled, DeleteTargets: []string{"target"}, DropFinalizer: true,
				WriteState: true, State: nil,
				Conditions:   []kubevirtv1.VirtualMachineInstanceMigrationConditionType{kubevirtv1.VirtualMachineInstanceMigrationAbortRequested},
				EventReasons: failedEvents}},
		{name: "canceled during the transfer: abort requested", m: newMig(phase(kubevirtv1.MigrationRunning), migDeleting()),
			vmi: newVMI(state(transferStarted)), pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())},
			want: outcome{Phase: kubevirtv1.MigrationRunning, WriteState: true,
				State:        withState(transferStarted, func(ms *kubevirtv1.VirtualMachineInstanceMigrationState) { ms.AbortRequested = true }),
				Conditions:   []kubevirtv1.VirtualMachineInstanceMigrationConditionType{kubevirtv1.VirtualMachineInstanceMigrationAbortRequested},
				EventReasons: []string{EventSuccessfulAbort}}},
		{name: "canceled during the transfer, abort already asked", m: newMig(phase(kubevirtv1.MigrationRunning), migDeleting()),
			vmi:  newVMI(state(transferStarted, func(ms *kubevirtv1.VirtualMachineInstanceMigrationState) { ms.AbortRequested = true })),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())},
			want: outcome{Phase: kubevirtv1.MigrationRunning,
				Conditions: []kubevirtv1.VirtualMachineInstanceMigrationConditionType{kubevirtv1.VirtualMachineInstanceMigrationAbortRequested}}},
		{name: "canceled, the source aborted", m: newMig(phase(kubevirtv1.MigrationRunning), migDeleting()),
			vmi: newVMI(state(transferFailed, func(ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
				ms.AbortRequested, ms.AbortStatus = true, kubevirtv1.MigrationAbortSucceeded
			})), pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())},
			want: outcome{Phase: kubevirtv1.MigrationFailed, FailReason: ReasonSourceFailed, DeleteTargets: []string{"target"}, DropFinalizer: true,
				EventReasons: failedEvents},
			wantMsg: "Migration canceled: the node agent aborted the transfer"},
		{name: "canceled too late: the migration succeeded", m: newMig(phase(kubevirtv1.MigrationRunning), migDeleting()),
			vmi:  newVMI(state(transferDone, domainDetected, func(ms *kubevirtv1.VirtualMachineInstanceMigrationState) { ms.AbortRequested = true })),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())},
			want: outcome{Phase: kubevirtv1.MigrationSucceeded, NodeName: "node-b", DropFinalizer: true,
				EventReasons: []string{"vmi:" + EventMigrated, EventSuccessfulMigration}}},

		// Final migrations: cleanup only.
		{name: "succeeded: a lingering source pod waits", m: newMig(phase(kubevirtv1.MigrationSucceeded), func(m *kubevirtv1.VirtualMachineInstanceMigration) {
			m.Status.PhaseTransitionTimestamps[0].PhaseTransitionTimestamp = *at(-10 * time.Second)
		}),
			vmi:  newVMI(state(transferDone, domainDetected), func(v *kubevirtv1.VirtualMachineInstance) { v.Status.NodeName = "node-b" }),
			pods: []*corev1.Pod{source(), target(onNode("node-b"), computeUp())},
			want: outcome{Phase: kubevirtv1.MigrationSucceeded, DropFinalizer: true, RequeueAfter: cfg.SourcePodLinger - 10*time.Second}},
		{name: "succeeded: a source pod that lingers too long is deleted", m: newMig(phase(kubevirtv1.MigrationSucceeded), noFinalizer()),
			vmi:  newVMI(state(transferDone, domainDetected), func(v *kubevirtv1.VirtualMachineInstance) { v.Status.NodeName = "node-b" }),
			pods: []*corev1.Pod{source(podAge(time.Hour)), target(onNode("node-b"), computeUp())},
			want: outcome{Phase: kubevirtv1.MigrationSucceeded, DeleteSource: "source"}},
		{name: "succeeded: the source pod ended by itself", m: newMig(phase(kubevirtv1.MigrationSucceeded), noFinalizer()),
			vmi:  newVMI(state(transferDone, domainDetected), func(v *kubevirtv1.VirtualMachineInstance) { v.Status.NodeName = "node-b" }),
			pods: []*corev1.Pod{source(podPhase(corev1.PodSucceeded)), target(onNode("node-b"), computeUp())},
			want: outcome{Phase: kubevirtv1.MigrationSucceeded}},
		{name: "failed: a leftover target pod is deleted", m: newMig(phase(kubevirtv1.MigrationFailed), noFinalizer()), vmi: newVMI(),
			pods: []*corev1.Pod{source(), target(onNode("node-b"))},
			want: outcome{Phase: kubevirtv1.MigrationFailed, DeleteTargets: []string{"target"}}},
		{name: "failed: never the instance's own pod", m: newMig(phase(kubevirtv1.MigrationFailed), noFinalizer()),
			vmi:  newVMI(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.NodeName = "node-b" }),
			pods: []*corev1.Pod{target(onNode("node-b"), computeUp())}, want: outcome{Phase: kubevirtv1.MigrationFailed}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &input{m: tc.m, vmi: tc.vmi, otherInFlight: tc.other, noCapacity: tc.noCapacity, now: testNow, cfg: cfg}
			if tc.noVMI {
				in.vmi = nil
			}
			for _, p := range tc.pods {
				if _, ok := p.Labels[kubevirtv1.MigrationJobLabel]; ok {
					in.targets = append(in.targets, p)
				} else {
					in.source, in.oldSource = p, p
				}
			}
			if in.source != nil && (podDown(in.source) || in.vmi == nil || in.source.Spec.NodeName != in.vmi.Status.NodeName) {
				in.source = nil
			}
			p := decide(in)
			got := summarize(p)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(),
				cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if !strings.Contains(p.failMessage, tc.wantMsg) {
				t.Errorf("failure message %q does not contain %q", p.failMessage, tc.wantMsg)
			}
		})
	}
}

func TestSetPhaseRecordsSkippedPhases(t *testing.T) {
	st := &kubevirtv1.VirtualMachineInstanceMigrationStatus{}
	setPhase(st, kubevirtv1.MigrationScheduling, testNow)
	setPhase(st, kubevirtv1.MigrationPreparingTarget, testNow.Add(time.Second))
	setPhase(st, kubevirtv1.MigrationPreparingTarget, testNow.Add(2*time.Second))
	setPhase(st, kubevirtv1.MigrationFailed, testNow.Add(3*time.Second))
	var got []kubevirtv1.VirtualMachineInstanceMigrationPhase
	for _, ts := range st.PhaseTransitionTimestamps {
		got = append(got, ts.Phase)
	}
	want := []kubevirtv1.VirtualMachineInstanceMigrationPhase{kubevirtv1.MigrationPending, kubevirtv1.MigrationScheduling,
		kubevirtv1.MigrationScheduled, kubevirtv1.MigrationPreparingTarget, kubevirtv1.MigrationFailed}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded phases (-want +got):\n%s", diff)
	}
	if st.Phase != kubevirtv1.MigrationFailed {
		t.Errorf("phase %s", st.Phase)
	}
}
