package agent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/domains"
	"github.com/nativevirt/nativevirt/pkg/node/streamserver"
)

// Agent reconciles the VMIs of one node: it owns the work queue and wires
// the parts that do the work (see the package documentation).
type Agent struct {
	nodeName string
	store    *domains.Store
	queue    workqueue.TypedRateLimitingInterface[string]

	launchers *launcherSet
	instances *instanceSync
	source    *migrationSource
	target    *migrationTarget
	commands  *commands
	guest     *guestStreams
}

// New returns an agent; call Run to start it.
func New(cfg Config) *Agent {
	cfg = cfg.withDefaults()
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "vmi"})
	enqueue := func(key string) { queue.Add(key) }
	vmis := vmiFinder{node: cfg.NodeName, vmis: cfg.VMIs, targets: cfg.TargetVMIs}
	rep := reporter{update: cfg.UpdateStatus, record: cfg.Event}
	secrets := secretReader{get: cfg.GetSecret}
	freezes := &freezer{now: cfg.Now, timers: cfg.Timers, enqueue: enqueue}
	launchers := newLauncherSet(cfg.Locator, cfg.Dial, cfg.Store, enqueue, freezes.resumeThaw)
	prep := &domainPreparer{secrets: secrets, cloudInitISO: cfg.CloudInitISO, createOverlay: cfg.CreateOverlay,
		prepareNetwork: cfg.PrepareNetwork, seed: cfg.SeedCapabilities}
	source := newMigrationSource(cfg.NodeName, cfg.Migration, cfg.Dial, cfg.Now, launchers, rep, enqueue)
	target := newMigrationTarget(cfg.NodeName, cfg.Migration.Endpoint, cfg.Locator, cfg.Pods, cfg.TargetVMIs, cfg.Now,
		launchers, prep, rep)
	finder := domainFinder{node: cfg.NodeName, vmis: cfg.VMIs, launchers: launchers}
	return &Agent{
		nodeName:  cfg.NodeName,
		store:     cfg.Store,
		queue:     queue,
		launchers: launchers,
		instances: &instanceSync{node: cfg.NodeName, store: cfg.Store, pods: cfg.Pods, buildDomain: cfg.BuildDomain,
			now: cfg.Now, vmis: vmis, report: rep, launchers: launchers, prepare: prep, source: source, target: target,
			status:  &guestInfo{now: cfg.Now, freezes: freezes, secrets: secrets},
			hotplug: &hotplugger{pods: cfg.Pods, containerRoot: cfg.containerRoot(), devices: &hostDevices{}, report: rep}},
		source:   source,
		target:   target,
		commands: &commands{domains: finder, freezes: freezes, enqueue: enqueue},
		guest:    &guestStreams{domains: finder, dialGuest: cfg.DialGuest},
	}
}

// Backend is what the agent serves to the stream server: commands, streams and
// queries on the VMIs of this node, and tunnels of migrations to it.
func (a *Agent) Backend() streamserver.Backend {
	return streamserver.Backend{Commands: a.commands, Streams: a.guest, GuestQueries: a.guest, Tunnels: a.target}
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
// that no longer exist. Migrations started by the workers run on ctx: they
// are aborted when it ends.
func (a *Agent) Run(ctx context.Context, workers int, synced ...cache.InformerSynced) error {
	defer utilruntime.HandleCrash()
	defer a.queue.ShutDown()
	logger := klog.FromContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("informer caches did not sync")
	}
	// Checkpointed VMIs first: re-attach to their domains promptly.
	for _, r := range a.store.List() {
		a.queue.Add(r.Key())
	}
	if err := a.launchers.watchReadyMarkers(); err != nil {
		logger.Error(err, "Launchers' ready markers are noticed by polling only")
	}
	defer a.launchers.stopWatchingReadyMarkers()
	logger.Info("Node agent started", "node", a.nodeName, "checkpoints", len(a.store.List()))
	for i := 0; i < workers; i++ {
		go wait.UntilWithContext(ctx, a.runWorker, time.Second)
	}
	go wait.UntilWithContext(ctx, a.collectGarbage, time.Minute)
	<-ctx.Done()
	a.launchers.closeAll()
	// Running migrations abort on ctx; give them a moment to end (libvirt
	// resumes the source guest) and their tunnels to close.
	a.source.awaitAll(logger, time.After(30*time.Second))
	a.target.tunnels.closeAll()
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
	after, err := a.instances.sync(klog.NewContext(ctx, klog.FromContext(ctx).WithValues("vmi", key)), key)
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Syncing VMI", "vmi", key)
		a.instances.syncFailed(key, err)
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
	for _, r := range a.store.List() {
		a.queue.Add(r.Key())
	}
}
