package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	listers "github.com/nativevirt/nativevirt/pkg/client/listers/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
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

// migrationTarget plays the target's part of the migrations to this node:
// it prepares the target launcher, publishes this agent's endpoint, reports
// the guest once it runs here, and connects the source agent's tunnels.
type migrationTarget struct {
	node string
	// endpoint is this agent's stream endpoint ("": no migrations to this node).
	endpoint  string
	locator   podfs.Locator
	pods      corelisters.PodLister
	targets   listers.VirtualMachineInstanceLister
	now       func() time.Time
	launchers *launcherSet
	prepare   *domainPreparer
	report    reporter
	tunnels   *tunnelSet
	// redial waits between attempts to reach a target launcher's socket.
	redial redialAfter
}

// newMigrationTarget returns a target with no open tunnels.
func newMigrationTarget(node, endpoint string, locator podfs.Locator, pods corelisters.PodLister, targets listers.VirtualMachineInstanceLister,
	now func() time.Time, launchers *launcherSet, prepare *domainPreparer, report reporter) *migrationTarget {
	return &migrationTarget{node: node, endpoint: endpoint, locator: locator, pods: pods, targets: targets, now: now,
		launchers: launchers, prepare: prepare, report: report, tunnels: newTunnelSet(), redial: redialPause}
}

// sync plays the target's part of a migration: prepare the target
// launcher and publish this agent's endpoint (the source may then start),
// and report when the guest runs here. The domain itself arrives through the
// migration; the target never defines, starts or resumes it.
func (t *migrationTarget) sync(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (time.Duration, error) {
	logger := klog.FromContext(ctx)
	ms := vmi.Status.MigrationState
	if ms.Completed && (ms.Failed || ms.TargetNodeDomainDetected) {
		// Our part is over. After a failure libvirt has removed the incoming
		// domain and the controller deletes the target pod.
		t.tunnels.close(ms.MigrationUID)
		if ms.Failed {
			t.launchers.release(vmi.UID)
		}
		return 0, nil
	}
	if ms.TargetPod == "" {
		return 0, nil
	}
	pod, err := t.targetPod(vmi)
	if err != nil || pod == nil {
		return 0, err // the pod informer brings the VMI back
	}
	domain := convert.DomainName(vmi.Namespace, vmi.Name)
	l, err := t.launchers.attach(ctx, vmi, pod, domain)
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
		return 0, t.prepareTarget(ctx, vmi, pod, l)
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
	now := metav1.NewTime(t.now())
	st := *vmi.Status.DeepCopy()
	st.MigrationState.TargetNodeDomainDetected = true
	st.MigrationState.TargetNodeDomainReadyTimestamp = &now
	if err := t.report.writeStatus(ctx, vmi, st); err != nil {
		return 0, err
	}
	kv := []interface{}{"migration", ms.MigrationUID, "state", info.State, "reason", info.Reason}
	if js, err := l.conn.JobStats(domain, true); err == nil && js.Active {
		kv = append(kv, "downtime", js.Downtime, "elapsed", js.Elapsed, "bytes", js.DataProcessed, "iterations", js.Iterations)
	}
	logger.Info("The migrated guest runs on this node", kv...)
	return 0, nil
}

// prepareTarget prepares the target launcher l for the incoming migration
// and publishes this agent's endpoint, which lets the source start.
func (t *migrationTarget) prepareTarget(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, l *launcher) error {
	logger := klog.FromContext(ctx)
	if t.endpoint == "" {
		logger.Info("This node cannot receive migrations: the node agent serves no stream endpoint")
		return nil
	}
	if _, err := t.prepare.disks(ctx, vmi, l.fs.Disks); err != nil {
		return fmt.Errorf("preparing the migration target's disks: %w", err)
	}
	// The incoming QEMU opens the same tap device the source's uses: the target pod
	// needs the same network before the transfer starts.
	if err := t.prepare.network(ctx, vmi, l); err != nil {
		return fmt.Errorf("preparing the migration target's network: %w", err)
	}
	// The incoming migration needs libvirt's capabilities as a define does.
	t.prepare.seedCapabilities(ctx, l)()
	if err := os.MkdirAll(l.fs.Private.Path(MigrationDir), 0o700); err != nil {
		return fmt.Errorf("preparing the migration target's socket directory: %w", err)
	}
	st := *vmi.Status.DeepCopy()
	st.MigrationState.TargetNodeAddress = t.endpoint
	if err := t.report.writeStatus(ctx, vmi, st); err != nil {
		return err
	}
	logger.Info("Migration target ready", "migration", st.MigrationState.MigrationUID, "pod", klog.KObj(pod), "address", t.endpoint)
	return nil
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
func (t *migrationTarget) targetPod(vmi *kubevirtv1.VirtualMachineInstance) (*corev1.Pod, error) {
	ms := vmi.Status.MigrationState
	pod, err := t.pods.Pods(vmi.Namespace).Get(ms.TargetPod)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if pod.Spec.NodeName != t.node || pod.Labels[kubevirtv1.CreatedByLabel] != string(vmi.UID) ||
		pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil, nil
	}
	return pod, nil
}

var _ streamserver.Tunnels = &migrationTarget{}

// MigrationTunnel implements streamserver.Tunnels: it connects a tunnel from
// the source agent to the target launcher of a migration this node is the
// target of, once the target is prepared and until the migration completed.
func (t *migrationTarget) MigrationTunnel(ctx context.Context, migrationUID types.UID, ch streams.MigrationChannel) (net.Conn, error) {
	if t.targets == nil {
		return nil, fmt.Errorf("node %s receives no migrations: %w", t.node, streamserver.ErrNotFound)
	}
	all, err := t.targets.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var vmi *kubevirtv1.VirtualMachineInstance
	for _, v := range all {
		if ms := v.Status.MigrationState; ms != nil && ms.MigrationUID == migrationUID && isMigrationTargetOn(t.node, v) {
			vmi = v
			break
		}
	}
	if vmi == nil {
		return nil, fmt.Errorf("node %s is not the target of migration %s: %w", t.node, migrationUID, streamserver.ErrNotFound)
	}
	ms := vmi.Status.MigrationState
	switch {
	case ms.Completed:
		return nil, fmt.Errorf("migration %s is over: %w", migrationUID, streamserver.ErrConflict)
	case ms.TargetNodeAddress == "":
		return nil, fmt.Errorf("the target of migration %s is not prepared yet: %w", migrationUID, streamserver.ErrConflict)
	}
	pod, err := t.targetPod(vmi)
	if err != nil {
		return nil, err
	}
	if pod == nil {
		return nil, fmt.Errorf("the target launcher pod %s of migration %s is not running on node %s: %w", ms.TargetPod, migrationUID, t.node, streamserver.ErrNotFound)
	}
	dir, err := podfs.Open(t.locator.EmptyDir(pod.UID, podfs.PrivateVolume))
	if err != nil {
		return nil, fmt.Errorf("the target launcher's volume: %w", err)
	}
	defer func() { _ = dir.Close() }()
	socket := dir.Path(podfs.LibvirtSocket)
	if ch != streams.ChannelLibvirt {
		socket = dir.Path(MigrationDir + "/" + ch.Socket())
	}
	conn, err := dialWaiting(ctx, socket, tunnelDialWait, t.redial)
	if err != nil {
		return nil, fmt.Errorf("connecting the %s channel of migration %s to the target launcher: %w", ch, migrationUID, err)
	}
	return t.tunnels.track(migrationUID, conn), nil
}

// redialAfter waits between two attempts of dialWaiting; its error (ctx's)
// ends the attempts.
type redialAfter func(ctx context.Context) error

// redialPause waits 100 ms, or until ctx ends.
func redialPause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(100 * time.Millisecond):
		return nil
	}
}

// dialWaiting connects to a unix socket, retrying after redial while it does
// not exist or does not accept yet.
func dialWaiting(ctx context.Context, socket string, wait time.Duration, redial redialAfter) (net.Conn, error) {
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
		if redial(ctx) != nil {
			return nil, err
		}
	}
}
