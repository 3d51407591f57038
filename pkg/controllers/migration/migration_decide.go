package migration

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/finalizer"
)

// input is everything one sync of a migration looks at, read from the caches.
type input struct {
	m   *kubevirtv1.VirtualMachineInstanceMigration
	vmi *kubevirtv1.VirtualMachineInstance // nil: the instance does not exist
	// targets are this migration's target pods (label kubevirt.io/migrationJobUID=<m.UID>).
	targets []*corev1.Pod
	// source is the instance's pod on its node, nil if none.
	source *corev1.Pod
	// oldSource is the pod named by the instance's migrationState.sourcePod, nil if none.
	oldSource *corev1.Pod
	// otherInFlight names another migration of the instance that goes first ("": none): the one
	// the instance's unfinished migrationState names, or an unfinished one further along (or as
	// far along and older).
	otherInFlight string
	// noCapacity says why no migration may start now ("": one may); only looked at when this
	// migration would create its target pod.
	noCapacity string
	// slotHeld: the sync holds the start lock (noCapacity was computed under it).
	slotHeld bool
	now      time.Time
	cfg      Config
}

// event is one event to record, on the migration or (onVMI) on its instance.
type event struct {
	onVMI                      bool
	eventType, reason, message string
}

// plan is what one sync does: writes in the order apply makes them.
type plan struct {
	// phase is the migration's phase after this sync.
	phase kubevirtv1.VirtualMachineInstanceMigrationPhase
	// failure is the Failed condition's reason and message when phase is Failed.
	failReason, failMessage string
	// setConditions and dropConditions change the migration's conditions.
	setConditions  []kubevirtv1.VirtualMachineInstanceMigrationCondition
	dropConditions []kubevirtv1.VirtualMachineInstanceMigrationConditionType

	createTarget  bool
	deleteTargets []*corev1.Pod
	deleteSource  *corev1.Pod

	// writeState replaces the instance's status.migrationState with state (nil clears it).
	writeState bool
	state      *kubevirtv1.VirtualMachineInstanceMigrationState
	// nodeName, when set, is the handover: the instance's status.nodeName becomes the target.
	nodeName string

	addFinalizer, removeFinalizer bool
	events                        []event
	// requeueAfter looks again after a deadline (a timeout, a linger, a wait for capacity).
	requeueAfter time.Duration
}

// Condition types of a migration that NativeVirt adds to KubeVirt's.
const (
	// ConditionFailed says why a migration failed (KubeVirt only tells it in events).
	ConditionFailed kubevirtv1.VirtualMachineInstanceMigrationConditionType = "migrationFailed"
	// ConditionTargetPodUnschedulable: the scheduler finds no node for the target pod yet.
	ConditionTargetPodUnschedulable kubevirtv1.VirtualMachineInstanceMigrationConditionType = "migrationTargetPodUnschedulable"
)

// Reasons of a failed migration (the migrationFailed condition's reason).
const (
	ReasonVMINotFound         = "VMINotFound"
	ReasonVMIStopped          = "VMIStopped"
	ReasonVMIDeleted          = "VMIDeleted"
	ReasonVMINotRunning       = "VMINotRunning"
	ReasonNotLiveMigratable   = "NotLiveMigratable"
	ReasonMigrationInProgress = "MigrationInProgress"
	ReasonCanceled            = "Canceled"
	ReasonTargetUnschedulable = "TargetPodUnschedulable"
	ReasonTargetTimeout       = "TargetPodTimeout"
	ReasonTargetDown          = "TargetPodDown"
	ReasonTargetGone          = "TargetPodGone"
	ReasonTargetOnSource      = "TargetOnSourceNode"
	ReasonSourceFailed        = "MigrationFailed"
	ReasonTargetRender        = "TargetPodRenderFailed"
)

// Event reasons, KubeVirt's where it has one.
const (
	EventSuccessfulCreate    = "SuccessfulCreate"
	EventFailedCreate        = "FailedCreate"
	EventSuccessfulDelete    = "SuccessfulDelete"
	EventFailedDelete        = "FailedDelete"
	EventSuccessfulHandOver  = "SuccessfulHandOver"
	EventSuccessfulMigration = "SuccessfulMigration"
	EventFailedMigration     = "FailedMigration"
	EventSuccessfulAbort     = "SuccessfulAbortMigration"
	EventTargetUnschedulable = "migrationTargetPodUnschedulable"
	EventMigrated            = "Migrated"
)

const (
	// capacityRetry is when a migration waiting for a free slot looks again (it is also
	// queued whenever a migration ends).
	capacityRetry              = 5 * time.Second
	abortRequestedConditionMsg = "the migration was deleted: abort requested"
)

func (p *plan) event(eventType, reason, message string) {
	p.events = append(p.events, event{eventType: eventType, reason: reason, message: message})
}

func (p *plan) vmiEvent(eventType, reason, message string) {
	p.events = append(p.events, event{onVMI: true, eventType: eventType, reason: reason, message: message})
}

func (p *plan) requeue(d time.Duration) {
	if d <= 0 {
		d = time.Second
	}
	if p.requeueAfter == 0 || d < p.requeueAfter {
		p.requeueAfter = d
	}
}

// deletableTargets are the target pods to delete when the migration fails: those not already
// going away, never one on the instance's own node (after a handover that pod runs the guest).
func (in *input) deletableTargets() []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range in.targets {
		if p.DeletionTimestamp != nil || (in.vmi != nil && p.Spec.NodeName != "" && p.Spec.NodeName == in.vmi.Status.NodeName) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// newestTarget is the target pod to follow (there is one in practice).
func newestTarget(pods []*corev1.Pod) *corev1.Pod {
	var best *corev1.Pod
	for _, p := range pods {
		if best == nil || best.CreationTimestamp.Before(&p.CreationTimestamp) {
			best = p
		}
	}
	return best
}

func hasFinalizer(m *kubevirtv1.VirtualMachineInstanceMigration) bool {
	return finalizer.Has(m, kubevirtv1.VirtualMachineInstanceMigrationFinalizer)
}

func liveMigratable(vmi *kubevirtv1.VirtualMachineInstance) (bool, string) {
	for _, c := range vmi.Status.Conditions {
		if c.Type != kubevirtv1.VirtualMachineInstanceIsMigratable {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return true, ""
		}
		return false, fmt.Sprintf("Cannot migrate VMI, Reason: %s, Message: %s", c.Reason, c.Message)
	}
	return false, "Cannot migrate VMI: its node agent has not reported the LiveMigratable condition"
}

// fail ends the migration as Failed. The target pods go. When the transfer never started, the
// controller also ends the instance's migrationState (completed, failed) so that neither node
// agent acts on it any more.
func (p *plan) fail(in *input, reason, message string) {
	p.phase = kubevirtv1.MigrationFailed
	p.failReason, p.failMessage = reason, message
	p.deleteTargets = in.deletableTargets()
	if ms := ownState(in.m, in.vmi); ms != nil && !ms.Completed && ms.StartTimestamp == nil {
		st := ms.DeepCopy()
		now := metav1.NewTime(in.now)
		st.Completed, st.Failed, st.EndTimestamp = true, true, &now
		if st.FailureReason == "" {
			st.FailureReason = message
		}
		p.writeState, p.state = true, st
	}
	p.event(corev1.EventTypeWarning, EventFailedMigration, message)
	if in.vmi != nil {
		p.vmiEvent(corev1.EventTypeWarning, EventFailedMigration,
			fmt.Sprintf("VirtualMachineInstance migration uid %s failed. reason: %s", in.m.UID, message))
	}
}

// abort asks the source node agent to abort a transfer in progress (its outcome decides then).
func (p *plan) abort(ms *kubevirtv1.VirtualMachineInstanceMigrationState, why string) {
	if ms.AbortRequested {
		return
	}
	st := ms.DeepCopy()
	st.AbortRequested = true
	p.writeState, p.state = true, st
	p.event(corev1.EventTypeNormal, EventSuccessfulAbort, "Migration is ready to be canceled by the node agent: "+why)
}

// decide is the migration state machine: a pure function of what the caches show.
func decide(in *input) plan {
	m, vmi := in.m, in.vmi
	p := plan{phase: m.Status.Phase}
	if isFinal(m.Status.Phase) {
		return finished(in)
	}
	if m.DeletionTimestamp == nil && !hasFinalizer(m) {
		p.addFinalizer = true
	}
	ms := ownState(m, vmi)
	started := ms != nil && ms.StartTimestamp != nil

	switch {
	case vmi == nil:
		p.fail(in, ReasonVMINotFound, "Migration failed because vmi does not exist.")
	case vmi.Status.Phase == kubevirtv1.Succeeded || vmi.Status.Phase == kubevirtv1.Failed:
		p.fail(in, ReasonVMIStopped, fmt.Sprintf("Migration failed: the VMI stopped (phase %s) during the migration.", vmi.Status.Phase))
	case ms != nil && ms.Completed:
		completed(in, &p, ms)
	case m.DeletionTimestamp != nil:
		cancel(in, &p, ms)
	case vmi.DeletionTimestamp != nil && !started:
		p.fail(in, ReasonVMIDeleted, "Migration failed: the VMI is being deleted.")
	case ms != nil:
		following(in, &p, ms)
	default:
		beforeHandoff(in, &p)
	}
	if p.phase != kubevirtv1.MigrationFailed {
		p.phase = later(m.Status.Phase, p.phase)
	}
	// A final migration lets go of its finalizer in the same sync (its cleanup is issued first).
	if isFinal(p.phase) && hasFinalizer(m) {
		p.addFinalizer, p.removeFinalizer = false, true
	}
	return p
}

// finished cleans up after a final migration: its finalizer goes; a failed migration's target
// pods go; after a success the source pod, if it lingers, goes after SourcePodLinger.
func finished(in *input) plan {
	p := plan{phase: in.m.Status.Phase, removeFinalizer: hasFinalizer(in.m)}
	switch in.m.Status.Phase {
	case kubevirtv1.MigrationFailed:
		p.deleteTargets = in.deletableTargets()
	case kubevirtv1.MigrationSucceeded:
		ms := ownState(in.m, in.vmi)
		if ms == nil || in.vmi.Status.NodeName != ms.TargetNode {
			break
		}
		src := in.oldSource
		if src == nil || src.Name != ms.SourcePod || podDown(src) {
			break
		}
		// The source launcher exits by itself once its domain is gone; one that lingers goes.
		since := phaseEntered(&in.m.Status, kubevirtv1.MigrationSucceeded)
		if wait := since.Add(in.cfg.SourcePodLinger).Sub(in.now); !since.IsZero() && wait > 0 {
			p.requeue(wait)
			break
		}
		p.deleteSource = src
	}
	return p
}

// completed follows the source node agent's verdict.
func completed(in *input, p *plan, ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
	switch {
	case ms.Failed:
		reason, msg := ReasonSourceFailed, "source node reported migration failed"
		if ms.FailureReason != "" {
			msg += ": " + ms.FailureReason
		}
		if ms.AbortRequested && ms.AbortStatus == kubevirtv1.MigrationAbortSucceeded {
			// The controller asks for an abort when the migration is deleted (a cancel) and when
			// the target pod went down during the transfer (following).
			if in.m.DeletionTimestamp != nil {
				msg = "Migration canceled: the node agent aborted the transfer"
			} else {
				reason, msg = ReasonTargetDown, "Migration failed because target pod shutdown during migration: the node agent aborted the transfer"
			}
		}
		p.fail(in, reason, msg)
	case ms.TargetNodeDomainDetected:
		// The handover: the target pod becomes the instance's pod.
		p.phase = kubevirtv1.MigrationSucceeded
		if in.vmi.Status.NodeName != ms.TargetNode {
			p.nodeName = ms.TargetNode
			p.vmiEvent(corev1.EventTypeNormal, EventMigrated, fmt.Sprintf("The VirtualMachineInstance migrated to node %s.", ms.TargetNode))
		}
		p.event(corev1.EventTypeNormal, EventSuccessfulMigration, "Source node reported migration succeeded")
	default:
		// The guest left the source; the target's node agent has yet to see it running there.
		p.phase = kubevirtv1.MigrationRunning
		if target := newestTarget(in.targets); target == nil || podDown(target) {
			p.fail(in, ReasonTargetDown, "Migration failed: the target pod ended before the guest was seen running in it")
		}
	}
}

// cancel handles a deleted migration that is not final yet. Before the transfer started the
// controller undoes it (target pods deleted, migrationState cleared); afterwards it asks the
// source node agent to abort and waits for its verdict.
func cancel(in *input, p *plan, ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
	p.setConditions = append(p.setConditions, kubevirtv1.VirtualMachineInstanceMigrationCondition{
		Type: kubevirtv1.VirtualMachineInstanceMigrationAbortRequested, Status: corev1.ConditionTrue,
		LastProbeTime: metav1.NewTime(in.now.Truncate(time.Second)), Message: abortRequestedConditionMsg})
	if ms != nil && ms.StartTimestamp != nil {
		p.phase = progress(ms, newestTarget(in.targets))
		p.abort(ms, "the migration was deleted")
		return
	}
	p.fail(in, ReasonCanceled, "Migration failed due to being canceled")
	if ms != nil {
		p.writeState, p.state = true, nil
	}
}

// following tracks a migration handed off to the node agents.
func following(in *input, p *plan, ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
	target := newestTarget(in.targets)
	if target == nil || podDown(target) {
		if ms.StartTimestamp != nil {
			// The transfer is in the source's hands: it fails without its target and says so.
			p.phase = kubevirtv1.MigrationRunning
			p.abort(ms, "the target pod is gone")
			return
		}
		reason, msg := ReasonTargetDown, "Migration failed because target pod shutdown during migration"
		if target == nil {
			reason, msg = ReasonTargetGone, "Migration target pod was removed during active migration."
		}
		p.fail(in, reason, msg)
		return
	}
	p.phase = progress(ms, target)
	if ms.StartTimestamp == nil && target.Status.Phase == corev1.PodPending {
		pendingTimeout(in, p, target)
	}
}

// beforeHandoff runs a migration from its creation until the instance's migrationState names it.
func beforeHandoff(in *input, p *plan) {
	m, vmi := in.m, in.vmi
	if in.otherInFlight != "" {
		p.fail(in, ReasonMigrationInProgress, fmt.Sprintf(
			"VMI is not eligible for migration because another migration job (%s) is in progress.", in.otherInFlight))
		return
	}
	if len(in.targets) == 0 {
		if phaseOrder[m.Status.Phase] >= phaseOrder[kubevirtv1.MigrationScheduling] {
			p.fail(in, ReasonTargetGone, "Migration target pod was removed during active migration.")
			return
		}
		start(in, p)
		return
	}
	target := newestTarget(in.targets)
	if podDown(target) {
		p.fail(in, ReasonTargetDown, "Migration failed because target pod shutdown during migration")
		return
	}
	p.phase = kubevirtv1.MigrationScheduling
	if target.Spec.NodeName == "" {
		if c := unschedulable(target); c != nil {
			p.setConditions = append(p.setConditions, kubevirtv1.VirtualMachineInstanceMigrationCondition{
				Type: ConditionTargetPodUnschedulable, Status: corev1.ConditionTrue, Reason: c.Reason, Message: c.Message,
				LastTransitionTime: c.LastTransitionTime})
		}
		pendingTimeout(in, p, target)
		return
	}
	p.dropConditions = append(p.dropConditions, ConditionTargetPodUnschedulable)
	if target.Spec.NodeName == vmi.Status.NodeName {
		p.fail(in, ReasonTargetOnSource, fmt.Sprintf("Migration failed: the target pod %s was placed on the source node %s.",
			target.Name, target.Spec.NodeName))
		return
	}
	// Hand off: the node agents see the instance's migrationState and take over.
	st := &kubevirtv1.VirtualMachineInstanceMigrationState{
		MigrationUID: m.UID,
		SourceNode:   vmi.Status.NodeName,
		TargetNode:   target.Spec.NodeName,
		TargetPod:    target.Name,
		Mode:         kubevirtv1.MigrationPreCopy,
	}
	if in.source != nil {
		st.SourcePod = in.source.Name
	}
	p.writeState, p.state = true, st
	p.phase = progress(st, target)
	p.event(corev1.EventTypeNormal, EventSuccessfulHandOver, "Migration target pod is ready for preparation by the node agent.")
}

// start checks that the instance can move now and asks for its target pod.
func start(in *input, p *plan) {
	vmi := in.vmi
	if vmi.Status.Phase != kubevirtv1.Running || vmi.Status.NodeName == "" {
		p.fail(in, ReasonVMINotRunning, fmt.Sprintf("Migration failed because the VMI is not running (phase %s).", vmi.Status.Phase))
		return
	}
	if ok, why := liveMigratable(vmi); !ok {
		p.fail(in, ReasonNotLiveMigratable, why)
		return
	}
	if in.noCapacity != "" {
		p.phase = kubevirtv1.MigrationPending
		p.requeue(capacityRetry)
		return
	}
	p.phase = kubevirtv1.MigrationScheduling
	p.createTarget = true
}

// pendingTimeout fails a migration whose target pod stays Pending too long: unschedulable for
// cfg.UnschedulableTimeout (KubeVirt: 5 minutes), or Pending for any reason for
// cfg.PendingTimeout (KubeVirt: 15 minutes). Until then it looks again at the deadline.
func pendingTimeout(in *input, p *plan, target *corev1.Pod) {
	if target.CreationTimestamp.IsZero() {
		return // no age known (never from a real apiserver)
	}
	age := in.now.Sub(target.CreationTimestamp.Time)
	if c := unschedulable(target); c != nil {
		if age >= in.cfg.UnschedulableTimeout {
			p.fail(in, ReasonTargetUnschedulable, fmt.Sprintf("Migration failed: the target pod %s could not be scheduled within %s: %s",
				target.Name, in.cfg.UnschedulableTimeout, c.Message))
			return
		}
		p.requeue(in.cfg.UnschedulableTimeout - age)
	}
	if age >= in.cfg.PendingTimeout {
		p.fail(in, ReasonTargetTimeout, fmt.Sprintf("Migration failed: the target pod %s did not start within %s.",
			target.Name, in.cfg.PendingTimeout))
		return
	}
	p.requeue(in.cfg.PendingTimeout - age)
}
