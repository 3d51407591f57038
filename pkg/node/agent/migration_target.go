package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/streamserver"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// MigrationDir is the directory of the migration sockets in a launcher pod's
// private volume (/var/run/nativevirt/migration in the pod): on the source
// the agent listens there for the source libvirt and QEMU; on the target the
// target libvirt and QEMU listen there for the agent.
const MigrationDir = "migration"

// tunnelDialWait bounds the wait for the target QEMU's migration or NBD
// socket: the source starts using a channel right after the target libvirt
// prepared it, and the socket may lag a little behind.
const tunnelDialWait = 15 * time.Second

// getVMI finds a VMI in the agent's two informers: the VMIs of this node, and
// the VMIs migrating to it. A VMI handed over to this node is in the first.
func (a *Agent) getVMI(namespace, name string) (*kubevirtv1.VirtualMachineInstance, error) {
	vmi, err := a.cfg.VMIs.VirtualMachineInstances(namespace).Get(name)
	if err == nil && vmi.Status.NodeName == a.cfg.NodeName {
		return vmi, nil
	}
	if a.cfg.TargetVMIs != nil {
		if t, terr := a.cfg.TargetVMIs.VirtualMachineInstances(namespace).Get(name); terr == nil {
			return t, nil
		} else if !apierrors.IsNotFound(terr) {
			return nil, terr
		}
	}
	return vmi, err
}

// isMigrationTarget reports whether this node is the target of the VMI's
// migration, before the handover.
func (a *Agent) isMigrationTarget(vmi *kubevirtv1.VirtualMachineInstance) bool {
	ms := vmi.Status.MigrationState
	return ms != nil && ms.TargetNode == a.cfg.NodeName && vmi.Status.NodeName != a.cfg.NodeName
}

// syncTarget plays the target's part of a migration: prepare the target
// launcher and publish this agent's endpoint (the source may then start),
// and report when the guest runs here. The domain itself arrives through the
// migration; the target never defines, starts or resumes it.
func (a *Agent) syncTarget(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (time.Duration, error) {
	logger := klog.FromContext(ctx)
	ms := vmi.Status.MigrationState
	if ms.Completed && (ms.Failed || ms.TargetNodeDomainDetected) {
		// Our part is over. After a failure libvirt has removed the incoming
		// domain and the controller deletes the target pod.
		a.closeTunnels(ms.MigrationUID)
		if ms.Failed {
			a.release(vmi.UID)
		}
		return 0, nil
	}
	if ms.TargetPod == "" {
		return 0, nil
	}
	pod, err := a.targetPod(vmi)
	if err != nil || pod == nil {
		return 0, err // the pod informer brings the VMI back
	}
	domain := DomainName(vmi.Namespace, vmi.Name)
	l, err := a.attach(ctx, vmi, pod, domain)
	if errors.Is(err, podfs.ErrNotReady) {
		logger.V(4).Info("Waiting for the target launcher", "pod", klog.KObj(pod), "err", err)
		return waitForLauncher, nil
	}
	if err != nil {
		return 0, err
	}

	if ms.TargetNodeAddress == "" {
		if ms.Completed {
			return 0, nil
		}
		if a.cfg.Migration.Endpoint == "" {
			logger.Info("This node cannot receive migrations: the node agent serves no stream endpoint")
			return 0, nil
		}
		if _, err := a.prepareDisks(ctx, vmi, l.fs.Disks); err != nil {
			return 0, fmt.Errorf("preparing the migration target's disks: %w", err)
		}
		// The incoming QEMU opens the same tap device the source's uses: the target pod
		// needs the same network before the transfer starts.
		if err := a.prepareNetwork(ctx, vmi, l); err != nil {
			return 0, fmt.Errorf("preparing the migration target's network: %w", err)
		}
		// The incoming migration needs libvirt's capabilities as a define does.
		a.seedCapabilities(ctx, l)()
		if err := os.MkdirAll(l.fs.Private.Path(MigrationDir), 0o700); err != nil {
			return 0, fmt.Errorf("preparing the migration target's socket directory: %w", err)
		}
		st := *vmi.Status.DeepCopy()
		st.MigrationState.TargetNodeAddress = a.cfg.Migration.Endpoint
		if err := a.writeStatus(ctx, vmi, st); err != nil {
			return 0, err
		}
		logger.Info("Migration target ready", "migration", ms.MigrationUID, "pod", klog.KObj(pod), "address", a.cfg.Migration.Endpoint)
		return 0, nil
	}

	if ms.TargetNodeDomainDetected {
		return 0, nil
	}
	info, err := l.conn.Info(domain)
	if errors.Is(err, virt.ErrNotFound) {
		return 0, nil // not arrived yet: its events bring the VMI back
	}
	if err != nil {
		return 0, err
	}
	if !guestRunsHere(info) {
		return 0, nil
	}
	now := metav1.NewTime(a.cfg.Now())
	st := *vmi.Status.DeepCopy()
	st.MigrationState.TargetNodeDomainDetected = true
	st.MigrationState.TargetNodeDomainReadyTimestamp = &now
	if err := a.writeStatus(ctx, vmi, st); err != nil {
		return 0, err
	}
	kv := []interface{}{"migration", ms.MigrationUID, "state", info.State, "reason", info.Reason}
	if js, err := l.conn.JobStats(domain, true); err == nil && js.Active {
		kv = append(kv, "downtime", js.Downtime, "elapsed", js.Elapsed, "bytes", js.DataProcessed, "iterations", js.Iterations)
	}
	logger.Info("The migrated guest runs on this node", kv...)
	return 0, nil
}

// guestRunsHere reports whether a target's domain took over: active and not
// paused by the incoming migration (a guest the user had paused arrives
// paused by the user).
func guestRunsHere(info virt.DomainInfo) bool {
	if !info.Active() {
		return false
	}
	return info.State != virt.StatePaused || (info.Reason != virt.ReasonMigration && info.Reason != virt.ReasonStartingUp)
}

// targetPod is the migration's target launcher pod, when it is on this node
// and runs this VMI.
func (a *Agent) targetPod(vmi *kubevirtv1.VirtualMachineInstance) (*corev1.Pod, error) {
	ms := vmi.Status.MigrationState
	pod, err := a.cfg.Pods.Pods(vmi.Namespace).Get(ms.TargetPod)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if pod.Spec.NodeName != a.cfg.NodeName || pod.Labels[kubevirtv1.CreatedByLabel] != string(vmi.UID) ||
		pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil, nil
	}
	return pod, nil
}

var _ streamserver.Backend = &Agent{}

// MigrationTunnel implements streamserver.Backend: it connects a tunnel from
// the source agent to the target launcher of a migration this node is the
// target of, once the target is prepared and until the migration completed.
func (a *Agent) MigrationTunnel(ctx context.Context, migrationUID types.UID, ch streams.MigrationChannel) (net.Conn, error) {
	if a.cfg.TargetVMIs == nil {
		return nil, fmt.Errorf("node %s receives no migrations: %w", a.cfg.NodeName, streamserver.ErrNotFound)
	}
	all, err := a.cfg.TargetVMIs.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var vmi *kubevirtv1.VirtualMachineInstance
	for _, v := range all {
		if ms := v.Status.MigrationState; ms != nil && ms.MigrationUID == migrationUID && a.isMigrationTarget(v) {
			vmi = v
			break
		}
	}
	if vmi == nil {
		return nil, fmt.Errorf("node %s is not the target of migration %s: %w", a.cfg.NodeName, migrationUID, streamserver.ErrNotFound)
	}
	ms := vmi.Status.MigrationState
	switch {
	case ms.Completed:
		return nil, fmt.Errorf("migration %s is over: %w", migrationUID, streamserver.ErrConflict)
	case ms.TargetNodeAddress == "":
		return nil, fmt.Errorf("the target of migration %s is not prepared yet: %w", migrationUID, streamserver.ErrConflict)
	}
	pod, err := a.targetPod(vmi)
	if err != nil {
		return nil, err
	}
	if pod == nil {
		return nil, fmt.Errorf("the target launcher pod %s of migration %s is not running on node %s: %w", ms.TargetPod, migrationUID, a.cfg.NodeName, streamserver.ErrNotFound)
	}
	dir, err := podfs.Open(a.cfg.Locator.EmptyDir(pod.UID, podfs.PrivateVolume))
	if err != nil {
		return nil, fmt.Errorf("the target launcher's volume: %w", err)
	}
	defer func() { _ = dir.Close() }()
	socket := dir.Path(podfs.LibvirtSocket)
	if ch != streams.ChannelLibvirt {
		socket = dir.Path(MigrationDir + "/" + ch.Socket())
	}
	conn, err := dialWaiting(ctx, socket, tunnelDialWait)
	if err != nil {
		return nil, fmt.Errorf("connecting the %s channel of migration %s to the target launcher: %w", ch, migrationUID, err)
	}
	return a.trackTunnel(migrationUID, conn), nil
}

// dialWaiting connects to a unix socket, retrying while it does not exist
// or does not accept yet.
func dialWaiting(ctx context.Context, socket string, wait time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "unix", socket)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// trackedConn is an incoming tunnel's connection to the target launcher;
// the agent closes it when the migration is over.
type trackedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes the unix connection.
func (c *trackedConn) CloseWrite() error {
	if wc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return wc.CloseWrite()
	}
	return c.Close()
}

func (a *Agent) trackTunnel(uid types.UID, conn net.Conn) net.Conn {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tunnels[uid] == nil {
		a.tunnels[uid] = map[net.Conn]struct{}{}
	}
	a.tunnels[uid][conn] = struct{}{}
	return &trackedConn{Conn: conn, release: func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		delete(a.tunnels[uid], conn)
		if len(a.tunnels[uid]) == 0 {
			delete(a.tunnels, uid)
		}
	}}
}

// closeTunnels ends the incoming tunnels of a migration.
func (a *Agent) closeTunnels(uid types.UID) {
	a.mu.Lock()
	conns := a.tunnels[uid]
	delete(a.tunnels, uid)
	a.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
}

func (a *Agent) closeAllTunnels() {
	a.mu.Lock()
	var uids []types.UID
	for uid := range a.tunnels {
		uids = append(uids, uid)
	}
	a.mu.Unlock()
	for _, uid := range uids {
		a.closeTunnels(uid)
	}
}
