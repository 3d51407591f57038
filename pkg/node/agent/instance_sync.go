package agent

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/domains"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

const (
	// waitForLauncher is how soon a VMI is looked at again while its
	// launcher is not ready yet.
	waitForLauncher = time.Second
	// shutdownPoll bounds the wait between checks during a graceful shutdown
	// (lifecycle events usually come first).
	shutdownPoll = 5 * time.Second
	// resync re-reads a running domain's guest OS and state even without events.
	resync = 30 * time.Second
)

// instanceSync brings each VMI of this node to its desired state: it
// attaches to the launcher, starts the domain once, keeps the status in step
// and stops the guest when the VMI goes; the migration source and target
// take over the VMIs that move.
type instanceSync struct {
	node        string
	store       *domains.Store
	pods        corelisters.PodLister
	buildDomain BuildDomainFunc
	now         func() time.Time
	vmis        vmiFinder
	report      reporter
	launchers   *launcherSet
	prepare     *domainPreparer
	status      *guestInfo
	source      *migrationSource
	target      *migrationTarget
	hotplug     *hotplugger
}

// sync brings the VMI key one step closer to its desired state and reports
// when it wants to be looked at again (0: on the next event).
func (s *instanceSync) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	vmi, err := s.vmis.get(ns, name)
	if apierrors.IsNotFound(err) {
		return 0, s.launchers.forgetKey(key, "")
	}
	if err != nil {
		return 0, err
	}
	if s.vmis.isMigrationTarget(vmi) {
		return s.target.sync(ctx, vmi)
	}
	if vmi.Status.NodeName != s.node {
		return 0, s.launchers.forgetKey(key, "")
	}
	// A checkpoint of an earlier VMI of the same name is stale.
	if err := s.launchers.forgetKey(key, vmi.UID); err != nil {
		return 0, err
	}
	switch vmi.Status.Phase {
	case kubevirtv1.Scheduled, kubevirtv1.Running:
	case kubevirtv1.Succeeded, kubevirtv1.Failed:
		s.launchers.release(vmi.UID)
		return 0, nil
	default:
		return 0, nil // the VMI controller's phases
	}

	rec, ok := s.store.Get(vmi.UID)
	if !ok {
		rec = domains.Record{UID: vmi.UID, Namespace: ns, Name: name, Domain: convert.DomainName(ns, name)}
	}
	pod, err := s.launcherPod(vmi)
	if err != nil {
		return 0, err
	}
	if vmi.Status.Phase == kubevirtv1.Running {
		// While the guest moves, or after it left, the source domain going
		// away is not the guest stopping.
		if handled, after, err := s.source.sync(ctx, vmi, pod); handled {
			return after, err
		}
	}
	if pod == nil {
		return s.launcherMissing(ctx, vmi, rec, "launcher pod is gone")
	}
	rec.PodUID = pod.UID
	return s.syncDomain(ctx, vmi, pod, rec)
}

// syncDomain attaches to the VMI's launcher pod and brings its domain one step
// closer: started once, observed while active, finished once stopped.
func (s *instanceSync) syncDomain(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, rec domains.Record) (time.Duration, error) {
	l, err := s.launchers.attach(ctx, vmi, pod, rec.Domain)
	if errors.Is(err, podfs.ErrNotReady) {
		if rec.Started || vmi.Status.Phase == kubevirtv1.Running {
			if pod.DeletionTimestamp != nil {
				return s.launcherMissing(ctx, vmi, rec, "launcher pod terminated")
			}
		}
		klog.FromContext(ctx).V(4).Info("Waiting for the launcher", "err", err)
		return waitForLauncher, nil
	}
	if err != nil {
		return 0, err
	}

	info, err := l.conn.Info(rec.Domain)
	if errors.Is(err, virt.ErrNotFound) {
		if vmi.DeletionTimestamp != nil {
			return 0, nil // never started, nothing to shut down
		}
		if rec.Started || vmi.Status.Phase == kubevirtv1.Running {
			return s.finish(ctx, vmi, rec, virt.DomainInfo{}, "domain disappeared")
		}
		return s.start(ctx, vmi, pod, rec, l)
	}
	if err != nil {
		return 0, err
	}
	if info.UID != "" && info.UID != string(vmi.UID) {
		return 0, fmt.Errorf("domain %s belongs to VMI uid %s, not %s", rec.Domain, info.UID, vmi.UID)
	}

	if !info.Active() {
		if !rec.Started && vmi.Status.Phase == kubevirtv1.Scheduled && vmi.DeletionTimestamp == nil {
			// Defined by an attempt that failed to start, or before an agent
			// restart: define afresh (the XML may differ) and start.
			if err := l.conn.Undefine(rec.Domain); err != nil && !errors.Is(err, virt.ErrNotFound) {
				return 0, err
			}
			return s.start(ctx, vmi, pod, rec, l)
		}
		rec.Killed = killedByKubelet(vmi, pod, l)
		return s.finish(ctx, vmi, rec, info, "")
	}
	return s.observeActive(ctx, vmi, pod, rec, l, info)
}

// start defines and starts the domain and reports it from the same sync: the
// start held this worker for long enough, and the Running status must not
// wait for a free worker again while other starts hold them all.
func (s *instanceSync) start(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, rec domains.Record, l *launcher) (time.Duration, error) {
	rec, err := s.startDomain(ctx, vmi, rec, l)
	if err != nil {
		return 0, err
	}
	info, err := l.conn.Info(rec.Domain)
	if err != nil || !info.Active() {
		// The started (or stopped) event brings the VMI back.
		return time.Millisecond, nil
	}
	return s.observeActive(ctx, vmi, pod, rec, l, info)
}

// observeActive records an active domain and writes the VMI's running
// status; for a deleted VMI it also shuts the guest down.
func (s *instanceSync) observeActive(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, rec domains.Record, l *launcher, info virt.DomainInfo) (time.Duration, error) {
	if !rec.Started {
		// Running although the checkpoint says otherwise (the state dir was
		// lost): adopt it. Never define or start a running domain again.
		now := s.now()
		rec.Started, rec.StartedAt = true, &now
	}
	rec.State, rec.Reason, rec.Gone = info.State, info.Reason, false
	if _, err := s.store.Put(rec); err != nil {
		return 0, err
	}
	after := resync
	if vmi.DeletionTimestamp != nil {
		var err error
		if after, err = s.shutdown(ctx, vmi, &rec, l); err != nil {
			return 0, err
		}
	}
	var hot hotplugResult
	if s.hotplug != nil && vmi.Status.Phase == kubevirtv1.Running && vmi.DeletionTimestamp == nil {
		hot = s.hotplug.sync(ctx, vmi, pod, l)
	}
	st := s.status.running(ctx, vmi, pod, l, info)
	st.VolumeStatus = mergeHotplugStatus(st.VolumeStatus, hot.status)
	if err := s.report.writeStatus(ctx, vmi, st); err != nil {
		return 0, err
	}
	if hot.retry && after > hotplugRetry {
		after = hotplugRetry
	}
	return after, nil
}

// startDomain prepares the disks and the pod network, defines and starts the
// domain, once; it returns the checkpoint record of the started domain.
func (s *instanceSync) startDomain(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, rec domains.Record, l *launcher) (domains.Record, error) {
	logger := klog.FromContext(ctx)
	t0 := time.Now()
	facts, err := s.prepare.disks(ctx, vmi, l.fs.Disks)
	if err != nil {
		return rec, fmt.Errorf("preparing disks: %w", err)
	}
	facts.BlockVolumes, facts.SharedVolumes = l.blockVolumes, l.sharedVolumes
	if err := s.prepare.network(ctx, vmi, l); err != nil {
		return rec, err
	}
	name, xml, err := s.buildDomain(vmi, facts)
	if err != nil {
		return rec, fmt.Errorf("converting the VMI to a domain: %w", err)
	}
	if name != rec.Domain {
		return rec, fmt.Errorf("converter named the domain %q, expected %q", name, rec.Domain)
	}
	capsOutcome := s.prepare.seedCapabilities(ctx, l)
	t1 := time.Now()
	err = l.conn.Define(xml)
	t2 := time.Now()
	// Asked also after a failed define: it releases what the seeding holds.
	qemuCaps := capsOutcome()
	if err != nil {
		return rec, err
	}
	s.report.event(vmi, corev1.EventTypeNormal, EventCreated, "VirtualMachineInstance defined.")
	// Checkpoint before starting: a crash right after Start must not lead to
	// a second start.
	now := s.now()
	rec.Started, rec.StartedAt = true, &now
	if _, err := s.store.Put(rec); err != nil {
		return rec, err
	}
	if err := l.conn.Start(rec.Domain, startsPaused(vmi)); err != nil {
		rec.Started, rec.StartedAt = false, nil
		if _, perr := s.store.Put(rec); perr != nil {
			logger.Error(perr, "Checkpointing the failed start")
		}
		return rec, err
	}
	s.report.event(vmi, corev1.EventTypeNormal, EventStarted, "VirtualMachineInstance started.")
	// The guest has only just begun to boot: its guest agent cannot answer
	// before the next resync.
	l.guestOSAt = now
	// The durations say where a slow start spent its time (the first define in a launcher
	// includes libvirt's probe of the QEMU binary, unless it used the node's capabilities).
	kv := []any{"domain", rec.Domain, "prepare", t1.Sub(t0).Round(time.Millisecond),
		"define", t2.Sub(t1).Round(time.Millisecond), "start", time.Since(t2).Round(time.Millisecond)}
	if qemuCaps != "" {
		kv = append(kv, "qemuCapabilities", qemuCaps)
	}
	logger.Info("Domain started", kv...)
	return rec, nil
}

// startsPaused tells whether the VMI's guest starts with its vCPUs paused (startStrategy
// Paused): the instance is Running with the Paused condition until it is unpaused.
func startsPaused(vmi *kubevirtv1.VirtualMachineInstance) bool {
	return vmi.Spec.StartStrategy != nil && *vmi.Spec.StartStrategy == kubevirtv1.StartStrategyPaused
}

// shutdown asks the guest to power off once, and destroys it when the grace
// period is over; it reports when to look again.
func (s *instanceSync) shutdown(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, rec *domains.Record, l *launcher) (time.Duration, error) {
	grace := kubevirtv1.DefaultGracePeriodSeconds
	if vmi.Spec.TerminationGracePeriodSeconds != nil {
		grace = *vmi.Spec.TerminationGracePeriodSeconds
	}
	now := s.now()
	logger := klog.FromContext(ctx)
	if rec.ShutdownAt == nil {
		rec.ShutdownAt = &now
		if _, err := s.store.Put(*rec); err != nil {
			return 0, err
		}
		if grace > 0 {
			logger.Info("Shutting the guest down", "gracePeriodSeconds", grace)
			s.report.event(vmi, corev1.EventTypeNormal, EventShuttingDown, fmt.Sprintf("Signaled Graceful Shutdown (grace period %d s)", grace))
			if err := l.conn.Shutdown(rec.Domain); err != nil && !errors.Is(err, virt.ErrNotFound) {
				logger.Error(err, "ACPI shutdown failed; the guest is destroyed after the grace period")
			}
		}
	}
	left := time.Duration(grace)*time.Second - now.Sub(*rec.ShutdownAt)
	if left > 0 {
		return min(left, shutdownPoll), nil
	}
	logger.Info("Grace period over: destroying the guest", "gracePeriodSeconds", grace)
	if err := l.conn.Destroy(rec.Domain); err != nil && !errors.Is(err, virt.ErrNotFound) {
		return 0, err
	}
	return time.Millisecond, nil
}

// launcherMissing handles a VMI whose launcher pod is gone or terminated.
func (s *instanceSync) launcherMissing(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, rec domains.Record, why string) (time.Duration, error) {
	s.launchers.release(vmi.UID)
	if !rec.Started && vmi.Status.Phase != kubevirtv1.Running {
		return 0, nil // never ran here: the VMI controller fails it
	}
	return s.finish(ctx, vmi, rec, virt.DomainInfo{}, why)
}

// finish records that the domain stopped and reports the final phase.
func (s *instanceSync) finish(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, rec domains.Record, info virt.DomainInfo, gone string) (time.Duration, error) {
	if rec.ShutdownAt == nil && vmi.DeletionTimestamp != nil {
		// Deleting the VMI asked for the stop, also when the launcher (told by
		// the pod's deletion) got to the guest before this agent did.
		at := vmi.DeletionTimestamp.Time
		rec.ShutdownAt = &at
	}
	rec.State, rec.Reason, rec.Gone = info.State, info.Reason, gone != ""
	if _, err := s.store.Put(rec); err != nil {
		return 0, err
	}
	phase := FinalPhase(info, rec)
	klog.FromContext(ctx).Info("Guest stopped", "phase", phase, "state", info.State, "reason", info.Reason, "gone", gone,
		"stoppedByKubelet", rec.Killed)
	if err := s.report.writeStatus(ctx, vmi, finalStatus(vmi, phase, s.now())); err != nil {
		return 0, err
	}
	s.stoppedEvent(vmi, phase, info, rec, gone)
	return 0, nil
}

// killedByKubelet tells whether the launcher stopped the guest (it was told to end) while
// neither the VMI nor the pod was being deleted: then the kubelet ended it on its own, which
// it does after a failed liveness probe.
func killedByKubelet(vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, l *launcher) bool {
	return vmi.DeletionTimestamp == nil && pod.DeletionTimestamp == nil && l.fs.Private.Exists(podfs.TerminatedMarker)
}

// FinalPhase decides between Succeeded and Failed for a stopped domain: a
// guest that powered itself off, or was stopped because its VMI was deleted,
// succeeded; a crash, a failure, a guest the kubelet had stopped (failed
// liveness probe) or a domain lost without being asked to stop failed.
func FinalPhase(info virt.DomainInfo, rec domains.Record) kubevirtv1.VirtualMachineInstancePhase {
	requested := rec.ShutdownAt != nil
	switch {
	case rec.Killed && !requested:
		return kubevirtv1.Failed
	case info.State == virt.StateShutoff && info.Reason == virt.ReasonShutdown:
		return kubevirtv1.Succeeded
	case info.State == virt.StateShutoff && info.Reason == virt.ReasonDestroyed && requested:
		return kubevirtv1.Succeeded
	case rec.Gone && requested:
		return kubevirtv1.Succeeded
	}
	return kubevirtv1.Failed
}

// launcherPod returns the launcher pod of the VMI on this node that can run
// its domain (not finished), the newest first; nil when there is none.
func (s *instanceSync) launcherPod(vmi *kubevirtv1.VirtualMachineInstance) (*corev1.Pod, error) {
	pods, err := s.pods.Pods(vmi.Namespace).List(labels.SelectorFromSet(labels.Set{
		kubevirtv1.CreatedByLabel: string(vmi.UID),
	}))
	if err != nil {
		return nil, err
	}
	var live []*corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != s.node || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		live = append(live, p)
	}
	if len(live) == 0 {
		return nil, nil
	}
	sort.Slice(live, func(i, j int) bool {
		return live[j].CreationTimestamp.Before(&live[i].CreationTimestamp)
	})
	return live[0], nil
}

// syncFailed records the error of a failed sync on the VMI of key. Conflicts (the VMI changed
// meanwhile) are the retry's business, not the user's.
func (s *instanceSync) syncFailed(key string, err error) {
	if apierrors.IsConflict(err) {
		return
	}
	vmi, gerr := s.vmis.ofKey(key)
	if gerr != nil || vmi == nil {
		return
	}
	s.report.event(vmi, corev1.EventTypeWarning, EventSyncFailed, err.Error())
}

// stoppedEvent records why the guest stopped for good.
func (s *instanceSync) stoppedEvent(vmi *kubevirtv1.VirtualMachineInstance, phase kubevirtv1.VirtualMachineInstancePhase, info virt.DomainInfo, rec domains.Record, gone string) {
	if phase == kubevirtv1.Succeeded {
		s.report.event(vmi, corev1.EventTypeNormal, EventStopped, "The VirtualMachineInstance was shut down.")
		return
	}
	msg := fmt.Sprintf("The VirtualMachineInstance stopped (%s, %s).", info.State, info.Reason)
	switch {
	case rec.Killed:
		msg = "The launcher was stopped by the kubelet although neither the instance nor its pod was deleted (a failed liveness probe): the guest was shut down."
	case info.State == virt.StateCrashed || info.Reason == virt.ReasonCrashed:
		msg = "The VirtualMachineInstance crashed."
	case gone != "":
		msg = "The VirtualMachineInstance is gone: " + gone + "."
	}
	s.report.event(vmi, corev1.EventTypeWarning, EventStopped, msg)
}
