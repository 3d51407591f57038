package agent

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// fsFreeze is a guest's file system freeze as the node agent knows it: what the guest agent
// last said, and the timer of the automatic thaw that a freeze with an unfreeze timeout sets
// (KubeVirt's freeze subresource: a guest must not stay frozen because its caller went away).
type fsFreeze struct {
	mu     sync.Mutex
	frozen bool
	thaw   *time.Timer
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

// Freeze implements streamserver.Backend: the guest agent freezes the guest's file systems;
// after unfreezeTimeout (0: never) the node agent thaws them unless Unfreeze came first.
func (a *Agent) Freeze(ctx context.Context, namespace, name string, uid types.UID, unfreezeTimeout time.Duration) error {
	return a.command(ctx, "freeze", namespace, name, uid, runningNotPaused, func(l *launcher) error {
		l.freeze.stopThaw()
		err := l.conn.FreezeFileSystems(l.domain)
		a.refreshFreeze(ctx, l)
		if err != nil {
			return err
		}
		if unfreezeTimeout > 0 {
			logger := klog.FromContext(ctx)
			l.freeze.mu.Lock()
			l.freeze.thaw = time.AfterFunc(unfreezeTimeout, func() { a.autoThaw(logger, l, unfreezeTimeout) })
			l.freeze.mu.Unlock()
		}
		return nil
	})
}

// Unfreeze implements streamserver.Backend: the guest agent thaws the guest's file systems
// (also when none were frozen, as the guest agent does).
func (a *Agent) Unfreeze(ctx context.Context, namespace, name string, uid types.UID) error {
	return a.command(ctx, "unfreeze", namespace, name, uid, runningNotPaused, func(l *launcher) error {
		l.freeze.stopThaw()
		err := l.conn.ThawFileSystems(l.domain)
		a.refreshFreeze(ctx, l)
		return err
	})
}

// autoThaw ends a freeze whose unfreeze timeout passed.
func (a *Agent) autoThaw(logger klog.Logger, l *launcher, after time.Duration) {
	l.freeze.mu.Lock()
	l.freeze.thaw = nil
	l.freeze.mu.Unlock()
	if err := l.conn.ThawFileSystems(l.domain); err != nil {
		logger.Error(err, "Thawing the guest's file systems after the unfreeze timeout", "domain", l.domain, "timeout", after)
	} else {
		logger.Info("Thawed the guest's file systems: the unfreeze timeout passed", "domain", l.domain, "timeout", after)
	}
	a.refreshFreeze(klog.NewContext(context.Background(), logger), l)
	a.queue.Add(l.key)
}

// refreshFreeze asks the guest agent whether the file systems are frozen; without an answer
// (no agent) they are not.
func (a *Agent) refreshFreeze(ctx context.Context, l *launcher) error {
	status, err := l.conn.FileSystemFreezeStatus(l.domain)
	if err != nil {
		klog.FromContext(ctx).V(4).Info("Freeze status unknown", "domain", l.domain, "err", err)
		status = ""
	}
	l.freeze.set(status)
	return err
}
