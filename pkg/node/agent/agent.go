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
// Files: agent.go (queue and wiring), launchers.go (connections to launcher
// daemons), reconcile.go (the sync decision), status.go (status computation),
// disks.go (local disk preparation), network.go (pod network preparation),
// commands.go (pause/unpause/softreboot, console and VNC for the stream
// server).
package agent

import (
	"context"
	"fmt"
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
)

// DomainFacts are what the agent found out locally that the domain XML needs.
type DomainFacts struct {
	// DiskFormats maps the names of file-backed volumes found in the disks
	// volume (containerDisk images) to their format, "raw" or "qcow2".
	DiskFormats map[string]string
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

// CloudInitISOFunc renders the cloud-init ISO image of a VMI (with its
// instance metadata) from the resolved user and network data.
type CloudInitISOFunc func(kind CloudInitKind, vmi *kubevirtv1.VirtualMachineInstance, userData, networkData []byte) ([]byte, error)

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
	// VMIs lists the VMIs of this node.
	VMIs listers.VirtualMachineInstanceLister
	// Pods lists the launcher pods of this node.
	Pods corelisters.PodLister
	// UpdateStatus writes a VMI's status subresource.
	UpdateStatus func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) error
	// GetSecret reads a Secret (cloud-init secretRef).
	GetSecret func(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Agent reconciles the VMIs of one node.
type Agent struct {
	cfg   Config
	queue workqueue.TypedRateLimitingInterface[string]

	mu        sync.Mutex
	launchers map[types.UID]*launcher // by VMI uid
}

// New returns an agent; call Run to start it.
func New(cfg Config) *Agent {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Agent{
		cfg: cfg,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "vmi"}),
		launchers: map[types.UID]*launcher{},
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
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("informer caches did not sync")
	}
	// Checkpointed VMIs first: re-attach to their domains promptly.
	for _, r := range a.cfg.Store.List() {
		a.queue.Add(r.Key())
	}
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
	a.mu.Unlock()
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
