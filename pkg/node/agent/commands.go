package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	listers "github.com/nativevirt/nativevirt/pkg/client/listers/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/streamserver"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

var _ streamserver.Commands = &commands{}

// domainFinder finds the running domain of a VMI of this node for a command,
// a stream or a query.
type domainFinder struct {
	node      string
	vmis      listers.VirtualMachineInstanceLister
	launchers *launcherSet
}

// target finds the domain of a VMI and its state.
func (d domainFinder) target(namespace, name string, uid types.UID) (*kubevirtv1.VirtualMachineInstance, *launcher, virt.DomainInfo, error) {
	vmi, err := d.vmis.VirtualMachineInstances(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil, virt.DomainInfo{}, fmt.Errorf("VMI %s/%s is not on node %s: %w", namespace, name, d.node, streamserver.ErrNotFound)
	}
	if err != nil {
		return nil, nil, virt.DomainInfo{}, err
	}
	if vmi.UID != uid {
		return nil, nil, virt.DomainInfo{}, fmt.Errorf("VMI %s/%s has uid %s, not %s: %w", namespace, name, vmi.UID, uid, streamserver.ErrConflict)
	}
	if vmi.Status.NodeName != d.node {
		return nil, nil, virt.DomainInfo{}, fmt.Errorf("VMI %s/%s is not on node %s: %w", namespace, name, d.node, streamserver.ErrNotFound)
	}
	l := d.launchers.get(uid)
	if l == nil && vmi.Status.Phase == kubevirtv1.Running {
		// The VMI runs here but this agent holds no connection to its launcher: it has just
		// (re)started and not re-attached yet. The caller should retry, not give up.
		return nil, nil, virt.DomainInfo{}, fmt.Errorf("the node agent of node %s has not attached to the domain of VMI %s/%s yet, retry: %w", d.node, namespace, name, streamserver.ErrUnavailable)
	}
	if l == nil {
		return nil, nil, virt.DomainInfo{}, fmt.Errorf("no domain for VMI %s/%s on node %s: %w", namespace, name, d.node, streamserver.ErrNotFound)
	}
	info, err := l.conn.Info(l.domain)
	if errors.Is(err, virt.ErrNotFound) {
		return nil, nil, virt.DomainInfo{}, fmt.Errorf("no domain for VMI %s/%s: %w", namespace, name, streamserver.ErrNotFound)
	}
	if err != nil {
		return nil, nil, virt.DomainInfo{}, err
	}
	return vmi, l, info, nil
}

// running finds the domain of a VMI for a stream or a query, which need it running.
func (d domainFinder) running(namespace, name string, uid types.UID) (*launcher, error) {
	_, l, info, err := d.target(namespace, name, uid)
	if err != nil {
		return nil, err
	}
	if !info.Active() {
		return nil, fmt.Errorf("VMI is not running: %w", streamserver.ErrConflict)
	}
	return l, nil
}

// commands run the pause, unpause, softreboot, freeze and unfreeze requests
// of the stream server on the domains of this node.
type commands struct {
	domains domainFinder
	freezes *freezer
	enqueue func(key string)
}

// command runs do on the VMI's launcher when allowed says the domain's state permits it.
func (c *commands) command(ctx context.Context, what, namespace, name string, uid types.UID, allowed func(virt.DomainInfo) error, do func(*launcher) error) error {
	_, l, info, err := c.domains.target(namespace, name, uid)
	if err != nil {
		return err
	}
	if err := allowed(info); err != nil {
		return fmt.Errorf("%w: %w", err, streamserver.ErrConflict)
	}
	if err := do(l); err != nil {
		return fmt.Errorf("%s VMI %s/%s: %w", what, namespace, name, err)
	}
	klog.FromContext(ctx).Info("Command done", "command", what, "vmi", klog.KRef(namespace, name))
	c.enqueue(l.key)
	return nil
}

func runningNotPaused(info virt.DomainInfo) error {
	switch info.State {
	case virt.StateRunning, virt.StateBlocked:
		return nil
	case virt.StatePaused:
		return errors.New("VMI is paused")
	}
	return errors.New("VMI is not running")
}

// Pause implements streamserver.Commands.
func (c *commands) Pause(ctx context.Context, namespace, name string, uid types.UID) error {
	return c.command(ctx, "pause", namespace, name, uid, func(info virt.DomainInfo) error {
		if info.State == virt.StatePaused {
			return errors.New("VMI is already paused")
		}
		return runningNotPaused(info)
	}, onDomain(virt.Conn.Pause))
}

// onDomain makes a command of a libvirt call on the launcher's domain.
func onDomain(call func(virt.Conn, string) error) func(*launcher) error {
	return func(l *launcher) error { return call(l.conn, l.domain) }
}

// Unpause implements streamserver.Commands.
func (c *commands) Unpause(ctx context.Context, namespace, name string, uid types.UID) error {
	return c.command(ctx, "unpause", namespace, name, uid, func(info virt.DomainInfo) error {
		if info.State != virt.StatePaused {
			return errors.New("VMI is not paused")
		}
		return nil
	}, onDomain(virt.Conn.Resume))
}

// SoftReboot implements streamserver.Commands.
func (c *commands) SoftReboot(ctx context.Context, namespace, name string, uid types.UID) error {
	return c.command(ctx, "softreboot", namespace, name, uid, runningNotPaused, onDomain(virt.Conn.Reboot))
}

// Freeze implements streamserver.Commands: the guest agent freezes the guest's file systems;
// after unfreezeTimeout (0: never) the node agent thaws them unless Unfreeze came first.
func (c *commands) Freeze(ctx context.Context, namespace, name string, uid types.UID, unfreezeTimeout time.Duration) error {
	return c.command(ctx, "freeze", namespace, name, uid, runningNotPaused, func(l *launcher) error {
		return c.freezes.freeze(ctx, l, unfreezeTimeout)
	})
}

// Unfreeze implements streamserver.Commands: the guest agent thaws the guest's file systems
// (also when none were frozen, as the guest agent does).
func (c *commands) Unfreeze(ctx context.Context, namespace, name string, uid types.UID) error {
	return c.command(ctx, "unfreeze", namespace, name, uid, runningNotPaused, func(l *launcher) error {
		return c.freezes.thaw(ctx, l)
	})
}
