package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
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

// DomainName is the libvirt domain name of a VMI (KubeVirt's naming).
func DomainName(namespace, name string) string {
	return namespace + "_" + name
}

// sync brings the VMI key one step closer to its desired state and reports
// when it wants to be looked at again (0: on the next event).
func (a *Agent) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	vmi, err := a.getVMI(ns, name)
	if apierrors.IsNotFound(err) {
		return 0, a.forgetKey(key, "")
	}
	if err != nil {
		return 0, err
	}
	if a.isMigrationTarget(vmi) {
		return a.syncTarget(ctx, vmi)
	}
	if vmi.Status.NodeName != a.cfg.NodeName {
		return 0, a.forgetKey(key, "")
	}
	// A checkpoint of an earlier VMI of the same name is stale.
	if err := a.forgetKey(key, vmi.UID); err != nil {
		return 0, err
	}
	switch vmi.Status.Phase {
	case kubevirtv1.Scheduled, kubevirtv1.Running:
	case kubevirtv1.Succeeded, kubevirtv1.Failed:
		a.release(vmi.UID)
		return 0, nil
	default:
		return 0, nil // the VMI controller's phases
	}

	rec, ok := a.cfg.Store.Get(vmi.UID)
	if !ok {
		rec = domains.Record{UID: vmi.UID, Namespace: ns, Name: name, Domain: DomainName(ns, name)}
	}
	pod, err := a.launcherPod(vmi)
	if err != nil {
		return 0, err
	}
	if vmi.Status.Phase == kubevirtv1.Running {
		// While the guest moves, or after it left, the source domain going
		// away is not the guest stopping.
		if handled, after, err := a.syncSource(ctx, vmi, pod); handled {
			return after, err
		}
	}
	if pod == nil {
		return a.launcherMissing(ctx, vmi, rec, "launcher pod is gone")
	}
	rec.PodUID = pod.UID
	l, err := a.attach(ctx, vmi, pod, rec.Domain)
	if errors.Is(err, podfs.ErrNotReady) {
		if rec.Started || vmi.Status.Phase == kubevirtv1.Running {
			if pod.DeletionTimestamp != nil {
				return a.launcherMissing(ctx, vmi, rec, "launcher pod terminated")
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
			return a.finish(ctx, vmi, rec, virt.DomainInfo{}, "domain disappeared")
		}
		return a.start(ctx, vmi, pod, rec, l)
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
			return a.start(ctx, vmi, pod, rec, l)
		}
		rec.Killed = killedByKubelet(vmi, pod, l)
		return a.finish(ctx, vmi, rec, info, "")
	}
	return a.observeActive(ctx, vmi, pod, rec, l, info)
}

// start defines and starts the domain and reports it from the same sync: the
// start held this worker for long enough, and the Running status must not
// wait for a free worker again while other starts hold them all.
func (a *Agent) start(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, rec domains.Record, l *launcher) (time.Duration, error) {
	rec, err := a.startDomain(ctx, vmi, rec, l)
	if err != nil {
		return 0, err
	}
	info, err := l.conn.Info(rec.Domain)
	if err != nil || !info.Active() {
		// The started (or stopped) event brings the VMI back.
		return time.Millisecond, nil
	}
	return a.observeActive(ctx, vmi, pod, rec, l, info)
}

// observeActive records an active domain and writes the VMI's running
// status; for a deleted VMI it also shuts the guest down.
func (a *Agent) observeActive(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, rec domains.Record, l *launcher, info virt.DomainInfo) (time.Duration, error) {
	if !rec.Started {
		// Running although the checkpoint says otherwise (the state dir was
		// lost): adopt it. Never define or start a running domain again.
		now := a.cfg.Now()
		rec.Started, rec.StartedAt = true, &now
	}
	rec.State, rec.Reason, rec.Gone = info.State, info.Reason, false
	if _, err := a.cfg.Store.Put(rec); err != nil {
		return 0, err
	}
	after := resync
	if vmi.DeletionTimestamp != nil {
		var err error
		if after, err = a.shutdown(ctx, vmi, &rec, l); err != nil {
			return 0, err
		}
	}
	if err := a.writeStatus(ctx, vmi, a.runningStatus(ctx, vmi, pod, l, info)); err != nil {
		return 0, err
	}
	return after, nil
}

// startDomain prepares the disks and the pod network, defines and starts the
// domain, once; it returns the checkpoint record of the started domain.
func (a *Agent) startDomain(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, rec domains.Record, l *launcher) (domains.Record, error) {
	logger := klog.FromContext(ctx)
	t0 := time.Now()
	facts, err := a.prepareDisks(ctx, vmi, l.fs.Disks)
	if err != nil {
		return rec, fmt.Errorf("preparing disks: %w", err)
	}
	facts.BlockVolumes, facts.SharedVolumes = l.blockVolumes, l.sharedVolumes
	if err := a.prepareNetwork(ctx, vmi, l); err != nil {
		return rec, err
	}
	name, xml, err := a.cfg.BuildDomain(vmi, facts)
	if err != nil {
		return rec, fmt.Errorf("converting the VMI to a domain: %w", err)
	}
	if name != rec.Domain {
		return rec, fmt.Errorf("converter named the domain %q, expected %q", name, rec.Domain)
	}
	capsOutcome := a.seedCapabilities(ctx, l)
	t1 := time.Now()
	err = l.conn.Define(xml)
	t2 := time.Now()
	// Asked also after a failed define: it releases what the seeding holds.
	qemuCaps := capsOutcome()
	if err != nil {
		return rec, err
	}
	a.event(vmi, corev1.EventTypeNormal, EventCreated, "VirtualMachineInstance defined.")
	// Checkpoint before starting: a crash right after Start must not lead to
	// a second start.
	now := a.cfg.Now()
	rec.Started, rec.StartedAt = true, &now
	if _, err := a.cfg.Store.Put(rec); err != nil {
		return rec, err
	}
	if err := l.conn.Start(rec.Domain, startsPaused(vmi)); err != nil {
		rec.Started, rec.StartedAt = false, nil
		if _, perr := a.cfg.Store.Put(rec); perr != nil {
			logger.Error(perr, "Checkpointing the failed start")
		}
		return rec, err
	}
	a.event(vmi, corev1.EventTypeNormal, EventStarted, "VirtualMachineInstance started.")
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
func (a *Agent) shutdown(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, rec *domains.Record, l *launcher) (time.Duration, error) {
	grace := kubevirtv1.DefaultGracePeriodSeconds
	if vmi.Spec.TerminationGracePeriodSeconds != nil {
		grace = *vmi.Spec.TerminationGracePeriodSeconds
	}
	now := a.cfg.Now()
	logger := klog.FromContext(ctx)
	if rec.ShutdownAt == nil {
		rec.ShutdownAt = &now
		if _, err := a.cfg.Store.Put(*rec); err != nil {
			return 0, err
		}
		if grace > 0 {
			logger.Info("Shutting the guest down", "gracePeriodSeconds", grace)
			a.event(vmi, corev1.EventTypeNormal, EventShuttingDown, fmt.Sprintf("Signaled Graceful Shutdown (grace period %d s)", grace))
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
func (a *Agent) launcherMissing(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, rec domains.Record, why string) (time.Duration, error) {
	a.release(vmi.UID)
	if !rec.Started && vmi.Status.Phase != kubevirtv1.Running {
		return 0, nil // never ran here: the VMI controller fails it
	}
	return a.finish(ctx, vmi, rec, virt.DomainInfo{}, why)
}

// finish records that the domain stopped and reports the final phase.
func (a *Agent) finish(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, rec domains.Record, info virt.DomainInfo, gone string) (time.Duration, error) {
	if rec.ShutdownAt == nil && vmi.DeletionTimestamp != nil {
		// Deleting the VMI asked for the stop, also when the launcher (told by
		// the pod's deletion) got to the guest before this agent did.
		at := vmi.DeletionTimestamp.Time
		rec.ShutdownAt = &at
	}
	rec.State, rec.Reason, rec.Gone = info.State, info.Reason, gone != ""
	if _, err := a.cfg.Store.Put(rec); err != nil {
		return 0, err
	}
	phase := FinalPhase(info, rec)
	klog.FromContext(ctx).Info("Guest stopped", "phase", phase, "state", info.State, "reason", info.Reason, "gone", gone,
		"stoppedByKubelet", rec.Killed)
	if err := a.writeStatus(ctx, vmi, finalStatus(vmi, phase, a.cfg.Now())); err != nil {
		return 0, err
	}
	a.stoppedEvent(vmi, phase, info, rec, gone)
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
