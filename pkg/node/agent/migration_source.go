package agent

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// The source side keeps ONE running copy of the guest, whatever fails:
//
//  1. libvirt's peer-to-peer protocol resumes the guest on the target only
//     after the transfer succeeded, and then stops and undefines the source
//     copy; when the transfer fails before the switch-over libvirt resumes
//     the source; when it cannot tell (the connection to the target broke
//     during the switch-over) it leaves the source paused.
//  2. The agent never resumes a guest a migration paused. When a transfer
//     ended (or an agent restart cut it off) it looks at the source domain:
//     running → the migration failed, the guest stayed here; gone →
//     it left; paused by the migration → unknown.
//  3. Gone or unknown, the outcome is confirmed by the TARGET agent, which
//     reports targetNodeDomainDetected once the guest runs there. Then the
//     migration completed: a source copy still paused is destroyed and
//     undefined. Without that report within ConfirmTimeout the migration
//     failed: a paused source copy STAYS PAUSED (the failure reason says so;
//     the user unpauses it once the target launcher is gone), a gone one is
//     lost and the VMI fails.
//  4. An agent that restarts mid-migration cannot continue the transfer
//     (its tunnels died with the old process): it aborts a libvirt job still
//     running and then applies 2 and 3.
//
// completed=true is written only after the target's report (or the
// timeout), so the target agent still sees the VMI (the
// migrationTargetNodeName label goes with completed) when it reports.

// Failure reasons the source writes.
const (
	reasonAbortedBeforeStart = "migration aborted before the transfer started"
	reasonAgentRestarted     = "the source node agent restarted during the migration; the guest stayed on the source"
	reasonGuestStopped       = "the guest stopped on the source during the migration"
	reasonGoneUnconfirmed    = "the guest left the source but the target node never reported it running"
	reasonPausedUnconfirmed  = "the outcome of the migration could not be confirmed: the guest is kept paused on the source; unpause it once the target launcher pod is gone"
)

// sync plays the source's part of a migration of a VMI of this node.
// handled=false lets the usual sync go on (no migration, or a failed one:
// the guest runs here).
func (s *migrationSource) sync(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod) (handled bool, after time.Duration, err error) {
	ms := vmi.Status.MigrationState
	m := s.migrationOf(vmi.UID)
	if ms == nil || ms.SourceNode != s.node || (m != nil && m.uid != ms.MigrationUID) {
		if m != nil {
			if !m.finished() {
				// The migration it runs for is no longer the VMI's.
				m.requestAbort()
				return true, 0, nil
			}
			s.forgetMigration(vmi.UID, m)
		}
		return false, 0, nil
	}
	if ms.Completed {
		if m != nil {
			s.forgetMigration(vmi.UID, m)
		}
		if !ms.Failed {
			// The guest left: nothing of this node runs it any more. The
			// handover to the target comes from the controller.
			s.launchers.release(vmi.UID)
			return true, 0, nil
		}
		return false, 0, nil
	}
	if m != nil {
		if !m.finished() {
			if ms.AbortRequested || vmi.DeletionTimestamp != nil {
				m.requestAbort()
			}
			return true, 0, nil
		}
		after, err := s.concludeMigration(ctx, vmi, m, pod)
		return true, after, err
	}
	if ms.StartTimestamp != nil {
		// Started by an earlier process of this agent.
		m = &migration{uid: ms.MigrationUID, domain: convert.DomainName(vmi.Namespace, vmi.Name), orphan: true,
			abort: make(chan struct{}), done: make(chan struct{}), ended: s.now(), err: errors.New(reasonAgentRestarted)}
		close(m.done)
		s.track(vmi.UID, m)
		klog.FromContext(ctx).Info("Found a migration started before this agent's restart", "migration", ms.MigrationUID)
		after, err := s.concludeMigration(ctx, vmi, m, pod)
		return true, after, err
	}
	if ms.TargetNodeAddress == "" {
		return false, 0, nil // the target is not ready yet
	}
	if ms.AbortRequested {
		return true, 0, s.writeOutcome(ctx, vmi, nil, reasonAbortedBeforeStart)
	}
	if vmi.DeletionTimestamp != nil || pod == nil {
		return false, 0, nil
	}
	return s.beginMigration(ctx, vmi, pod)
}

// beginMigration claims the migration (startTimestamp) and starts the
// transfer of a running guest.
func (s *migrationSource) beginMigration(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod) (bool, time.Duration, error) {
	logger := klog.FromContext(ctx)
	if s.cfg.DialTunnel == nil {
		logger.Info("This node cannot send migrations: the node agent has no client certificate for tunnels")
		return false, 0, nil
	}
	l, err := s.launchers.attach(ctx, vmi, pod, convert.DomainName(vmi.Namespace, vmi.Name))
	if errors.Is(err, podfs.ErrNotReady) {
		return false, 0, nil
	}
	if err != nil {
		return true, 0, err
	}
	info, err := l.conn.Info(l.domain)
	if err != nil || !info.Active() {
		return false, 0, nil // the usual sync reports what happened
	}
	now := metav1.NewTime(s.now())
	st := *vmi.Status.DeepCopy()
	st.MigrationState.StartTimestamp = &now
	// The write is the claim: a conflict (someone changed the VMI) retries.
	if err := s.report.writeStatus(ctx, vmi, st); err != nil {
		return true, 0, err
	}
	vmi = vmi.DeepCopy()
	vmi.Status = st
	if _, err := s.startMigration(ctx, vmi, l); err != nil {
		logger.Error(err, "Starting the migration")
		return true, 0, s.writeOutcome(ctx, vmi, nil, "the migration could not start: "+err.Error())
	}
	return true, 0, nil
}

// concludeMigration decides a migration whose transfer is over (see the
// rule at the top of this file) and writes the outcome once it is known.
func (s *migrationSource) concludeMigration(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, m *migration, pod *corev1.Pod) (time.Duration, error) {
	logger := klog.FromContext(ctx)
	gone := pod == nil
	var (
		l    *launcher
		info virt.DomainInfo
	)
	if !gone {
		var err error
		l, err = s.launchers.attach(ctx, vmi, pod, m.domain)
		switch {
		case errors.Is(err, podfs.ErrNotReady):
			gone = true // the launcher ends with its domain
		case err != nil:
			return 0, err
		}
	}
	if !gone {
		var err error
		info, err = l.conn.Info(m.domain)
		if errors.Is(err, virt.ErrNotFound) {
			gone = true
		} else if err != nil {
			return 0, err
		}
	}
	switch {
	case gone:
		return s.awaitTarget(ctx, vmi, m, reasonGoneUnconfirmed, nil)
	case m.orphan && info.Active() && jobRuns(l, m.domain):
		// The old process's transfer lost its tunnels: stop it, then decide.
		logger.Info("Aborting the migration job left by the previous agent process")
		if err := l.conn.AbortJob(m.domain); err != nil {
			logger.Error(err, "Aborting the orphaned migration job")
		}
		return time.Second, nil
	case info.State == virt.StatePaused && info.Reason == virt.ReasonMigration:
		return s.awaitTarget(ctx, vmi, m, reasonPausedUnconfirmed, func() error {
			// The target runs the guest: this paused copy must never run.
			if err := l.conn.Destroy(m.domain); err != nil && !errors.Is(err, virt.ErrNotFound) {
				return err
			}
			if err := l.conn.Undefine(m.domain); err != nil && !errors.Is(err, virt.ErrNotFound) {
				return err
			}
			logger.Info("Destroyed the paused source copy of the migrated guest")
			return nil
		})
	case info.Active():
		return 0, s.writeOutcome(ctx, vmi, m, failureReason(m))
	}
	return 0, s.writeOutcome(ctx, vmi, m, reasonGuestStopped)
}

// jobRuns reports whether libvirt still runs a job on the domain.
func jobRuns(l *launcher, domain string) bool {
	st, err := l.conn.JobStats(domain, false)
	return err == nil && st.Active
}

// awaitTarget completes the migration once the target agent reported the
// guest running (after cleanup of the source, if any), and fails it with
// unconfirmed after ConfirmTimeout.
func (s *migrationSource) awaitTarget(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, m *migration, unconfirmed string, cleanup func() error) (time.Duration, error) {
	if vmi.Status.MigrationState.TargetNodeDomainDetected {
		if cleanup != nil {
			if err := cleanup(); err != nil {
				return 0, err
			}
		}
		return 0, s.writeOutcome(ctx, vmi, m, "")
	}
	waited := s.now().Sub(m.ended)
	if waited < s.cfg.ConfirmTimeout {
		klog.FromContext(ctx).V(2).Info("Waiting for the target node to report the guest", "waited", waited)
		return min(2*time.Second, s.cfg.ConfirmTimeout-waited), nil
	}
	return 0, s.writeOutcome(ctx, vmi, m, unconfirmed)
}

// failureReason says why a transfer that left the guest on the source failed.
func failureReason(m *migration) string {
	msg := "the migration failed"
	if m.err != nil {
		msg = m.err.Error()
	}
	if m.orphan {
		return msg
	}
	if m.failure != "" {
		return m.failure + ": " + msg
	}
	if errors.Is(m.err, virt.ErrAborted) {
		return "migration aborted: " + msg
	}
	return msg
}

// writeOutcome completes the VMI's migration: succeeded when failure is
// empty, failed with that reason otherwise; an abort request is answered.
func (s *migrationSource) writeOutcome(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, m *migration, failure string) error {
	now := metav1.NewTime(s.now())
	st := *vmi.Status.DeepCopy()
	ms := st.MigrationState
	ms.Completed, ms.EndTimestamp = true, &now
	if failure != "" {
		ms.Failed, ms.FailureReason = true, failure
	}
	if ms.AbortRequested {
		ms.AbortStatus = kubevirtv1.MigrationAbortFailed
		if failure != "" {
			ms.AbortStatus = kubevirtv1.MigrationAbortSucceeded
		}
	}
	if err := s.report.writeStatus(ctx, vmi, st); err != nil {
		return err
	}
	kv := []interface{}{"migration", ms.MigrationUID, "target", ms.TargetNode, "failed", ms.Failed}
	if failure != "" {
		kv = append(kv, "reason", failure)
	}
	if m != nil {
		s.forgetMigration(vmi.UID, m)
		if !m.orphan {
			kv = append(kv, "duration", m.ended.Sub(m.started).Round(time.Millisecond), "bytes", m.stats.DataProcessed, "iterations", m.stats.Iterations)
		}
	}
	klog.FromContext(ctx).Info("Migration completed", kv...)
	return nil
}
