// Package agent is the reconcile loop of nativevirt-handler, the node agent.
//
// It watches the VMIs whose status.nodeName is this node (a field selector
// served by the apiserver) and their launcher pods, and for each one:
// attaches to the launcher's libvirt daemon through the pod's private
// emptyDir, prepares local disks (emptyDisk files, cloud-init ISOs), defines
// and starts the domain once, keeps the VMI status (phase, interfaces,
// conditions, guest OS) in step with the domain, and shuts the guest down
// within its grace period when the VMI is deleted. Lifecycle events from
// libvirt and a periodic resync feed the queue; the domain checkpoint
// (package domains) makes restarts of the agent invisible to the guests.
//
// It also watches the VMIs whose migration target is this node (label
// kubevirt.io/migrationTargetNodeName) and plays both ends of a live
// migration: as target it prepares the target launcher and accepts the
// source agent's tunnels; as source it runs the libvirt migration through
// them (see migration_source.go for the rule that keeps one running copy).
//
// Files: agent.go (queue and wiring), launchers.go (connections to launcher
// daemons), reconcile.go (the sync decision), status.go (status computation),
// disks.go (local disk preparation), network.go (pod network preparation),
// commands.go (pause/unpause/softreboot, console and VNC for the stream
// server), migration_target.go (target side and its tunnels),
// migration_source.go (source-side decisions), migration_job.go (the running
// transfer).
package agent

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	listers "github.com/nativevirt/nativevirt/pkg/client/listers/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/domains"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// DomainFacts are what the agent found out locally that the domain XML needs.
type DomainFacts struct {
	// DiskFormats maps the names of file-backed volumes found in the disks
	// volume (containerDisk images) to their format, "raw" or "qcow2".
	DiskFormats map[string]string
	// BlockVolumes names the claim volumes the launcher pod attaches as block
	// devices (/dev/<volume>) instead of mounting a filesystem.
	BlockVolumes map[string]bool
	// SharedVolumes names its ReadWriteMany claim volumes (other nodes attach
	// the same data; a live migration leaves them in place).
	SharedVolumes map[string]bool
}

// BuildDomainFunc converts a VMI into its libvirt domain name and XML.
type BuildDomainFunc func(vmi *kubevirtv1.VirtualMachineInstance, facts DomainFacts) (name string, xml []byte, err error)

// CloudInitKind says which cloud-init data source an ISO is for.
type CloudInitKind string

// Cloud-init data sources.
const (
	// NoCloud: volume label cidata, files user-data, meta-data, network-config.
	NoCloud CloudInitKind = "NoCloud"
	// ConfigDrive: volume label config-2, OpenStack layout.
	ConfigDrive CloudInitKind = "ConfigDrive"
)

// CloudInitData is the resolved content of a cloud-init volume.
type CloudInitData struct {
	// UserData and NetworkData are the volume's (from the spec or its secrets).
	UserData, NetworkData []byte
	// PublicKeys are the SSH public keys of the instance's accessCredentials that propagate
	// through this kind of volume, by name: the meta-data's public keys.
	PublicKeys map[string]string
}

// CloudInitISOFunc renders the cloud-init ISO image of a VMI (with its
// instance metadata) from the resolved data.
type CloudInitISOFunc func(kind CloudInitKind, vmi *kubevirtv1.VirtualMachineInstance, data CloudInitData) ([]byte, error)

// Config is everything the agent depends on; function fields keep the
// reconcile logic testable without a cluster or libvirt.
type Config struct {
	// NodeName is this node.
	NodeName string
	// Locator finds launcher pod volumes under the kubelet root.
	Locator podfs.Locator
	// Store is the domain checkpoint.
	Store *domains.Store
	// Dial connects to a launcher's libvirt daemon.
	Dial virt.DialFunc
	// BuildDomain converts a VMI into domain XML.
	BuildDomain BuildDomainFunc
	// CloudInitISO renders cloud-init ISOs.
	CloudInitISO CloudInitISOFunc
	// PrepareNetwork prepares the pod network in a launcher pod before the
	// domain is defined there (nil: nothing to prepare).
	PrepareNetwork PrepareNetworkFunc
	// DialGuest connects to a port of the guest from inside a launcher pod (nil: port
	// forwarding is not available on this node).
	DialGuest DialGuestFunc
	// SeedCapabilities gives a launcher the node's QEMU capabilities before the first define
	// (nil: libvirt probes QEMU in every launcher pod).
	SeedCapabilities SeedCapabilitiesFunc
	// VMIs lists the VMIs of this node.
	VMIs listers.VirtualMachineInstanceLister
	// Pods lists the launcher pods of this node.
	Pods corelisters.PodLister
	// UpdateStatus writes a VMI's status subresource.
	UpdateStatus func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) error
	// GetSecret reads a Secret (cloud-init secretRef).
	GetSecret func(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// CreateOverlay creates the qcow2 image overlay backed by backing (both
	// host paths; the backing file is recorded by its base name, relative to
	// the overlay) in backingFormat, raw or qcow2.
	CreateOverlay func(overlay, backing, backingFormat string) error
	// TargetVMIs lists the VMIs whose migration target is this node (label
	// kubevirt.io/migrationTargetNodeName); nil: this node is never a target.
	TargetVMIs listers.VirtualMachineInstanceLister
	// Migration configures live migration.
	Migration MigrationConfig
	// Event records an event on a VMI (nil: no events).
	Event func(vmi *kubevirtv1.VirtualMachineInstance, eventType, reason, message string)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// MigrationConfig configures both ends of live migrations.
type MigrationConfig struct {
	// Endpoint is this agent's stream endpoint ("host:port") as other node
	// agents reach it; empty disables migrations to this node.
	Endpoint string
	// DialTunnel opens a migration tunnel to the target agent at endpoint;
	// nil disables migrations from this node.
	DialTunnel func(ctx context.Context, endpoint string, t streams.MigrationTarget) (net.Conn, error)
	// ProgressTimeout aborts a migration whose remaining data did not shrink
	// for that long (DefaultProgressTimeout when zero).
	ProgressTimeout time.Duration
	// CompletionTimeoutPerGiB bounds a migration's duration per GiB of guest
	// memory, at least one GiB's worth (DefaultCompletionTimeoutPerGiB when zero).
	CompletionTimeoutPerGiB time.Duration
	// ConfirmTimeout is how long the source waits, once its guest is gone or
	// paused by a migration, for the target agent to report the guest
	// running before it declares the migration failed (DefaultConfirmTimeout
	// when zero).
	ConfirmTimeout time.Duration
	// Poll is how often a running migration's progress is checked (one
	// second when zero).
	Poll time.Duration
	// BandwidthMiB caps each migration from this node in MiB/s; 0 leaves it
	// unlimited.
	BandwidthMiB uint64
}

// Migration defaults (KubeVirt's timeouts).
const (
	DefaultProgressTimeout         = 150 * time.Second
	DefaultCompletionTimeoutPerGiB = 150 * time.Second
	DefaultConfirmTimeout          = 2 * time.Minute
)

// Agent reconciles the VMIs of one node.
type Agent struct {
	cfg   Config
	queue workqueue.TypedRateLimitingInterface[string]

	// ctx lives as long as Run (background before): migrations run on it.
	ctx context.Context

	mu        sync.Mutex
	launchers map[types.UID]*launcher // by VMI uid
	// migrations are the outgoing migrations of this process, by VMI uid.
	migrations map[types.UID]*migration
	// tunnels are the open incoming migration tunnels, by migration uid.
	tunnels map[types.UID]map[net.Conn]struct{}
	// ready reports launchers' ready markers as they appear (nil: the
	// waitForLauncher poll alone notices them). Set by Run.
	ready *podfs.ReadyWatch
}

// New returns an agent; call Run to start it.
func New(cfg Config) *Agent {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m := &cfg.Migration
	if m.ProgressTimeout <= 0 {
		m.ProgressTimeout = DefaultProgressTimeout
	}
	if m.CompletionTimeoutPerGiB <= 0 {
		m.CompletionTimeoutPerGiB = DefaultCompletionTimeoutPerGiB
	}
	if m.ConfirmTimeout <= 0 {
		m.ConfirmTimeout = DefaultConfirmTimeout
	}
	if m.Poll <= 0 {
		m.Poll = time.Second
	}
	return &Agent{
		cfg: cfg,
		ctx: context.Background(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "vmi"}),
		launchers:  map[types.UID]*launcher{},
		migrations: map[types.UID]*migration{},
		tunnels:    map[types.UID]map[net.Conn]struct{}{},
	}
}

// AddEventHandlers makes VMI and launcher pod changes enqueue their VMI.
func (a *Agent) AddEventHandlers(vmis, pods cache.SharedIndexInformer) error {
	if _, err := vmis.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    a.enqueueObject,
		UpdateFunc: func(_, obj interface{}) { a.enqueueObject(obj) },
		DeleteFunc: a.enqueueObject,
	}); err != nil {
		return err
	}
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    a.enqueuePod,
		UpdateFunc: func(_, obj interface{}) { a.enqueuePod(obj) },
		DeleteFunc: a.enqueuePod,
	})
	return err
}

// AddTargetEventHandlers makes changes of the VMIs migrating to this node
// (the informer behind Config.TargetVMIs) enqueue them.
func (a *Agent) AddTargetEventHandlers(targetVMIs cache.SharedIndexInformer) error {
	_, err := targetVMIs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    a.enqueueObject,
		UpdateFunc: func(_, obj interface{}) { a.enqueueObject(obj) },
		DeleteFunc: a.enqueueObject,
	})
	return err
}

func (a *Agent) enqueueObject(obj interface{}) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	a.queue.Add(key)
}

// enqueuePod enqueues the VMI owning a launcher pod.
func (a *Agent) enqueuePod(obj interface{}) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if name := vmiNameOfPod(pod); name != "" {
		a.queue.Add(pod.Namespace + "/" + name)
	}
}

// vmiNameOfPod is the name of the VMI a launcher pod runs.
func vmiNameOfPod(pod *corev1.Pod) string {
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "VirtualMachineInstance" {
		return ref.Name
	}
	return pod.Annotations[kubevirtv1.DomainAnnotation]
}

// Run processes the queue with workers until ctx ends, after the informers
// behind synced have synced. Every resync it also forgets checkpoints of VMIs
// that no longer exist.
func (a *Agent) Run(ctx context.Context, workers int, synced ...cache.InformerSynced) error {
	defer utilruntime.HandleCrash()
	defer a.queue.ShutDown()
	logger := klog.FromContext(ctx)
	a.mu.Lock()
	a.ctx = ctx
	a.mu.Unlock()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("informer caches did not sync")
	}
	// Checkpointed VMIs first: re-attach to their domains promptly.
	for _, r := range a.cfg.Store.List() {
		a.queue.Add(r.Key())
	}
	if err := a.watchReadyMarkers(); err != nil {
		logger.Error(err, "Launchers' ready markers are noticed by polling only")
	}
	defer a.stopWatchingReadyMarkers()
	logger.Info("Node agent started", "node", a.cfg.NodeName, "checkpoints", len(a.cfg.Store.List()))
	for i := 0; i < workers; i++ {
		go wait.UntilWithContext(ctx, a.runWorker, time.Second)
	}
	go wait.UntilWithContext(ctx, a.collectGarbage, time.Minute)
	<-ctx.Done()
	a.mu.Lock()
	for uid, l := range a.launchers {
		l.close()
		delete(a.launchers, uid)
	}
	migrations := a.migrations
	a.migrations = map[types.UID]*migration{}
	a.mu.Unlock()
	// Running migrations abort on ctx; give them a moment to end (libvirt
	// resumes the source guest) and their tunnels to close.
	wait := time.After(30 * time.Second)
	for _, m := range migrations {
		select {
		case <-m.done:
		case <-wait:
			logger.Info("A migration did not end after its abort", "migration", m.uid)
		}
	}
	a.closeAllTunnels()
	return nil
}

func (a *Agent) runWorker(ctx context.Context) {
	for a.processNextWorkItem(ctx) {
	}
}

func (a *Agent) processNextWorkItem(ctx context.Context) bool {
	key, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(key)
	after, err := a.sync(klog.NewContext(ctx, klog.FromContext(ctx).WithValues("vmi", key)), key)
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Syncing VMI", "vmi", key)
		a.syncFailed(key, err)
		a.queue.AddRateLimited(key)
		return true
	}
	a.queue.Forget(key)
	if after > 0 {
		a.queue.AddAfter(key, after)
	}
	return true
}

// collectGarbage forgets checkpoints and connections of VMIs that are gone.
func (a *Agent) collectGarbage(ctx context.Context) {
	for _, r := range a.cfg.Store.List() {
		a.queue.Add(r.Key())
	}
}
