package agent

import (
	"context"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// thawNote is the domain note (virt.Notes) holding when a freeze ends by itself (RFC 3339): the
// timer lives in this process, the note with the domain, so a restarted node agent arms the
// timer again (resumeThaw) and a guest does not stay frozen because the agent restarted.
const thawNote = "thaw-at"

// fsFreeze is a guest's file system freeze as the node agent knows it: what the guest agent
// last said, and the timer of the automatic thaw that a freeze with an unfreeze timeout sets
// (KubeVirt's freeze subresource: a guest must not stay frozen because its caller went away).
type fsFreeze struct {
	mu     sync.Mutex
	frozen bool
	thaw   clock.Timer
}

// status is the VMI's status.fsFreezeStatus: "frozen", or empty (KubeVirt reports no "thawed").
func (f *fsFreeze) status() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen {
		return virt.FSFrozen
	}
	return ""
}

// set records the guest agent's answer to guest-fsfreeze-status.
func (f *fsFreeze) set(status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = status == virt.FSFrozen
}

// stopThaw cancels a pending automatic thaw.
func (f *fsFreeze) stopThaw() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.thaw != nil {
		f.thaw.Stop()
		f.thaw = nil
	}
}

// freezer freezes and thaws guests' file systems through their guest agent
// and thaws them by itself after an unfreeze timeout, also across restarts
// of the node agent.
type freezer struct {
	now     func() time.Time
	timers  clock.WithDelayedExecution
	enqueue func(key string)
}

// freeze freezes the guest's file systems; after unfreezeTimeout (0: never)
// they are thawed unless thaw came first.
func (f *freezer) freeze(ctx context.Context, l *launcher, unfreezeTimeout time.Duration) error {
	l.freeze.stopThaw()
	err := l.conn.FreezeFileSystems(l.domain)
	_ = f.refresh(ctx, l)
	if err != nil {
		return err
	}
	if unfreezeTimeout == 0 {
		// Frozen until unfreeze: an earlier freeze's thaw time no longer applies.
		f.forgetThaw(ctx, l)
		return nil
	}
	at := f.now().Add(unfreezeTimeout)
	if err := l.conn.SetNote(l.domain, thawNote, at.UTC().Format(time.RFC3339Nano)); err != nil {
		klog.FromContext(ctx).Error(err, "Recording when the freeze ends: a restart of the node agent before then would keep the guest frozen", "domain", l.domain)
	}
	f.armThaw(klog.FromContext(ctx), l, unfreezeTimeout)
	return nil
}

// thaw thaws the guest's file systems (also when none were frozen, as the
// guest agent does).
func (f *freezer) thaw(ctx context.Context, l *launcher) error {
	l.freeze.stopThaw()
	f.forgetThaw(ctx, l)
	err := l.conn.ThawFileSystems(l.domain)
	_ = f.refresh(ctx, l)
	return err
}

// armThaw thaws the guest after d.
func (f *freezer) armThaw(logger klog.Logger, l *launcher, d time.Duration) {
	l.freeze.mu.Lock()
	defer l.freeze.mu.Unlock()
	if l.freeze.thaw != nil {
		l.freeze.thaw.Stop()
	}
	l.freeze.thaw = f.timers.AfterFunc(d, func() { f.autoThaw(logger, l) })
}

// resumeThaw arms the thaw of a freeze that a previous node agent process started (its note
// says when), or thaws at once when that time has passed.
func (f *freezer) resumeThaw(ctx context.Context, l *launcher) {
	note, err := l.conn.Note(l.domain, thawNote)
	if err != nil || note == "" {
		return
	}
	logger := klog.FromContext(ctx)
	at, err := time.Parse(time.RFC3339Nano, note)
	if err != nil {
		logger.Error(err, "Unreadable thaw time: thawing now", "domain", l.domain, "note", note)
	}
	left := max(at.Sub(f.now()), 0)
	logger.Info("A freeze of the guest's file systems ends by itself", "domain", l.domain, "in", left)
	f.armThaw(logger, l, left)
}

// autoThaw ends a freeze whose unfreeze timeout passed.
func (f *freezer) autoThaw(logger klog.Logger, l *launcher) {
	l.freeze.mu.Lock()
	l.freeze.thaw = nil
	l.freeze.mu.Unlock()
	ctx := klog.NewContext(context.Background(), logger)
	if err := l.conn.ThawFileSystems(l.domain); err != nil {
		logger.Error(err, "Thawing the guest's file systems after the unfreeze timeout", "domain", l.domain)
	} else {
		logger.Info("Thawed the guest's file systems: the unfreeze timeout passed", "domain", l.domain)
		f.forgetThaw(ctx, l)
	}
	_ = f.refresh(ctx, l)
	f.enqueue(l.key)
}

// forgetThaw removes the thaw note.
func (f *freezer) forgetThaw(ctx context.Context, l *launcher) {
	if err := l.conn.SetNote(l.domain, thawNote, ""); err != nil {
		klog.FromContext(ctx).V(2).Info("Removing the thaw note", "domain", l.domain, "err", err)
	}
}

// refresh asks the guest agent whether the file systems are frozen; without an answer
// (no agent) they are not.
func (f *freezer) refresh(ctx context.Context, l *launcher) error {
	status, err := l.conn.FileSystemFreezeStatus(l.domain)
	if err != nil {
		klog.FromContext(ctx).V(4).Info("Freeze status unknown", "domain", l.domain, "err", err)
		status = ""
	}
	l.freeze.set(status)
	return err
}
