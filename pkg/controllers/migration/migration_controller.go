// Package migration is the VirtualMachineInstanceMigration controller: it drives a live
// migration through Pending → Scheduling → Scheduled → PreparingTarget → TargetReady → Running →
// Succeeded | Failed, as KubeVirt's does. It creates the target launcher pod (pkg/launcherpod's
// pod of the instance, kept off the source node), hands the migration to the node agents by
// writing the instance's status.migrationState, follows what they write there, and on success
// hands the instance over to the target (status.nodeName). Deleting a migration cancels it
// (finalizer kubevirt.io/migrationJobFinalize). See docs/controllers.md for who writes what.
//
// The decisions are a pure function of the caches (decide); apply makes the writes.
package migration

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	informers "github.com/nativevirt/nativevirt/pkg/client/informers/externalversions/kubevirt/v1"
	listers "github.com/nativevirt/nativevirt/pkg/client/listers/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/expectations"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/podindex"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/wiring"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// Name is the controller's name in logs, events and metrics.
const Name = "migration-controller"

// Config tunes the controller; DefaultConfig has KubeVirt's values.
type Config struct {
	// ParallelMigrationsPerCluster is how many migrations may run at once in the cluster.
	ParallelMigrationsPerCluster int
	// ParallelOutboundMigrationsPerNode is how many migrations may leave one node at once.
	ParallelOutboundMigrationsPerNode int
	// UnschedulableTimeout fails a migration whose target pod the scheduler cannot place.
	UnschedulableTimeout time.Duration
	// PendingTimeout fails a migration whose target pod stays Pending for any reason.
	PendingTimeout time.Duration
	// SourcePodLinger is how long after a handover a source launcher may keep running before
	// it is deleted (it exits by itself once its domain is gone).
	SourcePodLinger time.Duration
	// Launcher renders the target pods, exactly like the VMI controller's launcher pods.
	Launcher launcherpod.Config
}

// DefaultConfig returns KubeVirt's defaults: 5 migrations per cluster, 2 outbound per node,
// an unschedulable target pod fails the migration after 5 minutes, a pending one after 15.
func DefaultConfig() Config {
	return Config{
		ParallelMigrationsPerCluster:      5,
		ParallelOutboundMigrationsPerNode: 2,
		UnschedulableTimeout:              5 * time.Minute,
		PendingTimeout:                    15 * time.Minute,
		SourcePodLinger:                   30 * time.Second,
	}
}

// Validate checks the limits and timeouts.
func (c Config) Validate() error {
	switch {
	case c.ParallelMigrationsPerCluster < 1:
		return fmt.Errorf("the parallel migrations per cluster must be at least 1, not %d", c.ParallelMigrationsPerCluster)
	case c.ParallelOutboundMigrationsPerNode < 1:
		return fmt.Errorf("the parallel outbound migrations per node must be at least 1, not %d", c.ParallelOutboundMigrationsPerNode)
	case c.UnschedulableTimeout <= 0 || c.PendingTimeout <= 0:
		return fmt.Errorf("the migration target pod timeouts must be positive")
	}
	return nil
}

// Indexes of the migration informer.
const (
	byUID = "uid"
	byVMI = "vmi"
)

// Controller is the migration controller.
type Controller struct {
	queue      *loop.Queue
	migLister  listers.VirtualMachineInstanceMigrationLister
	migIndexer cache.Indexer
	vmiLister  listers.VirtualMachineInstanceLister
	podIndexer cache.Indexer
	synced     []cache.InformerSynced
	exp        *expectations.Expectations
	cfg        Config
	api        writes
	now        func() time.Time

	// startMu makes the decision to start a migration (count the running ones, create the
	// target pod) one at a time, so that parallel workers never exceed the limits.
	startMu sync.Mutex
	// starting holds migrations whose target pod was created but whose cache copy is not past
	// Pending yet: they already count against the limits.
	starting map[string]bool
}

// writes are the controller's API writes, as function fields so that tests can stub them.
type writes struct {
	createPod       func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	deletePod       func(ctx context.Context, namespace, name string, uid types.UID) error
	updateVMIStatus func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (*kubevirtv1.VirtualMachineInstance, error)
	updateStatus    func(ctx context.Context, m *kubevirtv1.VirtualMachineInstanceMigration) (*kubevirtv1.VirtualMachineInstanceMigration, error)
	patch           func(ctx context.Context, namespace, name string, data []byte) (*kubevirtv1.VirtualMachineInstanceMigration, error)
	event           func(obj runtime.Object, eventType, reason, message string)
}

// New wires the controller to its informers (the pod informer lists launcher pods only:
// podindex.LauncherSelector). Run starts it.
func New(kubeClient kubernetes.Interface, client versioned.Interface, migInformer informers.VirtualMachineInstanceMigrationInformer,
	vmiInformer informers.VirtualMachineInstanceInformer, podInformer coreinformers.PodInformer, cfg Config,
	recorder record.EventRecorder) (*Controller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := podindex.Ensure(podInformer.Informer()); err != nil {
		return nil, err
	}
	if err := migInformer.Informer().AddIndexers(cache.Indexers{
		byUID: func(obj any) ([]string, error) {
			if m, ok := obj.(*kubevirtv1.VirtualMachineInstanceMigration); ok {
				return []string{string(m.UID)}, nil
			}
			return nil, nil
		},
		byVMI: func(obj any) ([]string, error) {
			if m, ok := obj.(*kubevirtv1.VirtualMachineInstanceMigration); ok {
				return []string{m.Namespace + "/" + m.Spec.VMIName}, nil
			}
			return nil, nil
		},
	}); err != nil {
		return nil, err
	}
	c := &Controller{
		migLister:  migInformer.Lister(),
		migIndexer: migInformer.Informer().GetIndexer(),
		vmiLister:  vmiInformer.Lister(),
		podIndexer: podInformer.Informer().GetIndexer(),
		synced: []cache.InformerSynced{migInformer.Informer().HasSynced, vmiInformer.Informer().HasSynced,
			podInformer.Informer().HasSynced},
		exp:      expectations.New(),
		cfg:      cfg,
		now:      time.Now,
		starting: map[string]bool{},
	}
	c.queue = loop.New(Name, c.sync)
	c.api = writes{
		createPod: func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
			return kubeClient.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		},
		deletePod: func(ctx context.Context, namespace, name string, uid types.UID) error {
			return kubeClient.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		},
		updateVMIStatus: func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (*kubevirtv1.VirtualMachineInstance, error) {
			return client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, vmi, metav1.UpdateOptions{})
		},
		updateStatus: func(ctx context.Context, m *kubevirtv1.VirtualMachineInstanceMigration) (*kubevirtv1.VirtualMachineInstanceMigration, error) {
			return client.KubevirtV1().VirtualMachineInstanceMigrations(m.Namespace).UpdateStatus(ctx, m, metav1.UpdateOptions{})
		},
		patch: func(ctx context.Context, namespace, name string, data []byte) (*kubevirtv1.VirtualMachineInstanceMigration, error) {
			return client.KubevirtV1().VirtualMachineInstanceMigrations(namespace).Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{})
		},
		event: recorder.Event,
	}

	err := wiring.Register(
		wiring.Handler{Informer: migInformer.Informer(), Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    c.migrationChanged,
			UpdateFunc: c.migrationUpdated,
			DeleteFunc: c.migrationDeleted,
		}},
		wiring.Handler{Informer: vmiInformer.Informer(), Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    c.vmiChanged,
			UpdateFunc: func(_, cur any) { c.vmiChanged(cur) },
			DeleteFunc: c.vmiChanged,
		}},
		wiring.Handler{Informer: podInformer.Informer(), Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.podChanged(nil, obj, false) },
			UpdateFunc: func(old, cur any) { c.podChanged(old, cur, false) },
			DeleteFunc: func(obj any) { c.podChanged(nil, obj, true) },
		}})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Run syncs migrations with workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.queue.Run(ctx, workers, c.synced...)
}

// migrationChanged handles an add or an update of a migration (wiring.Changed).
func (c *Controller) migrationChanged(obj any) {
	wiring.Changed[*kubevirtv1.VirtualMachineInstanceMigration](c.queue, c.exp, obj)
}

// vmiKey is the expectations key of an instance (migrations use their own namespace/name).
func vmiKey(namespace, name string) string { return "vmi:" + namespace + "/" + name }

func (c *Controller) migrationUpdated(old, cur any) {
	c.migrationChanged(cur)
	o, ok1 := old.(*kubevirtv1.VirtualMachineInstanceMigration)
	m, ok2 := cur.(*kubevirtv1.VirtualMachineInstanceMigration)
	if ok1 && ok2 && !isFinal(o.Status.Phase) && isFinal(m.Status.Phase) {
		c.queuePending()
	}
}

func (c *Controller) migrationDeleted(obj any) {
	c.queue.AddObject(obj)
	c.queuePending()
}

// queuePending queues the migrations waiting for a free slot: one just ended.
func (c *Controller) queuePending() {
	all, err := c.migLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, m := range all {
		if m.Status.Phase == kubevirtv1.MigrationPhaseUnset || m.Status.Phase == kubevirtv1.MigrationPending {
			c.queue.Add(cache.MetaObjectToName(m).String())
		}
	}
}

// queueOfInstance queues the migrations of an instance.
func (c *Controller) queueOfInstance(namespace, name string) {
	objs, err := c.migIndexer.ByIndex(byVMI, namespace+"/"+name)
	if err != nil {
		return
	}
	for _, o := range objs {
		if m, ok := o.(*kubevirtv1.VirtualMachineInstanceMigration); ok {
			c.queue.Add(cache.MetaObjectToName(m).String())
		}
	}
}

func (c *Controller) vmiChanged(obj any) {
	vmi, ok := wiring.Object[*kubevirtv1.VirtualMachineInstance](obj)
	if !ok {
		return
	}
	c.exp.VersionObserved(vmiKey(vmi.Namespace, vmi.Name), vmi.ResourceVersion)
	c.queueOfInstance(vmi.Namespace, vmi.Name)
}

// podChanged follows launcher pods: a target pod's migration (found by its label) is queued and
// its creation or deletion observed; any other launcher pod queues its instance's migrations.
func (c *Controller) podChanged(old, obj any, deleted bool) {
	pod, ok := wiring.Object[*corev1.Pod](obj)
	if !ok {
		return
	}
	uid, target := launcherpod.IsMigrationTarget(pod)
	if target {
		if objs, err := c.migIndexer.ByIndex(byUID, string(uid)); err == nil && len(objs) > 0 {
			if m, ok := objs[0].(*kubevirtv1.VirtualMachineInstanceMigration); ok {
				key := cache.MetaObjectToName(m).String()
				oldPod, _ := old.(*corev1.Pod)
				switch {
				case deleted:
					c.exp.DeletionObserved(key, pod.UID)
				case old == nil:
					c.exp.CreationObserved(key)
				case pod.DeletionTimestamp != nil && oldPod != nil && oldPod.DeletionTimestamp == nil:
					c.exp.DeletionObserved(key, pod.UID)
				}
				c.queue.Add(key)
			}
		}
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil && ref.Kind == "VirtualMachineInstance" {
		c.queueOfInstance(pod.Namespace, ref.Name)
	}
}

// sync reconciles one migration: read, decide, apply.
func (c *Controller) sync(ctx context.Context, key string) (loop.Result, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return loop.Result{}, nil
	}
	cached, err := c.migLister.VirtualMachineInstanceMigrations(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.exp.Delete(key)
		c.setStarting(key, false)
		return loop.Result{}, nil
	}
	if err != nil {
		return loop.Result{}, err
	}
	if !c.exp.Satisfied(key) || !c.exp.VersionSatisfied(vmiKey(namespace, cached.Spec.VMIName)) {
		// The caches lag behind our own last writes; the events that catch them up requeue.
		return loop.Result{RequeueAfter: expectations.RecheckAfter}, nil
	}
	if isFinal(cached.Status.Phase) || phaseOrder[cached.Status.Phase] >= phaseOrder[kubevirtv1.MigrationScheduling] {
		c.setStarting(key, false)
	}
	in := &input{m: cached.DeepCopy(), now: c.now(), cfg: c.cfg}
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("vmim", klog.KObj(in.m), "vmi", in.m.Spec.VMIName))
	if err := c.read(in); err != nil {
		return loop.Result{}, err
	}
	if in.needsSlot() {
		c.startMu.Lock()
		defer c.startMu.Unlock()
		in.noCapacity, in.slotHeld = c.capacity(in.m, in.vmi), true
	}
	p := decide(in)
	if err := c.apply(ctx, key, in, &p); err != nil {
		return loop.Result{}, err
	}
	return loop.Result{RequeueAfter: p.requeueAfter}, nil
}

// read fills in the instance, its pods and the other migrations from the caches.
func (c *Controller) read(in *input) error {
	m := in.m
	vmi, err := c.vmiLister.VirtualMachineInstances(m.Namespace).Get(m.Spec.VMIName)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	in.vmi = vmi.DeepCopy()
	pods, err := podindex.PodsOf(c.podIndexer, string(vmi.UID))
	if err != nil {
		return err
	}
	var sourceName string
	if ms := vmi.Status.MigrationState; ms != nil {
		sourceName = ms.SourcePod
	}
	for _, p := range pods {
		uid, target := launcherpod.IsMigrationTarget(p)
		if target && uid == m.UID {
			in.targets = append(in.targets, p)
			continue
		}
		if p.Name == sourceName {
			in.oldSource = p
		}
		if p.Spec.NodeName == vmi.Status.NodeName && p.Spec.NodeName != "" && !podDown(p) &&
			(in.source == nil || in.source.CreationTimestamp.Before(&p.CreationTimestamp)) {
			in.source = p
		}
	}
	in.otherInFlight = c.otherInFlight(m, vmi)
	return nil
}

// needsSlot reports whether this sync may start the migration (create its target pod).
func (in *input) needsSlot() bool {
	m := in.m
	return in.vmi != nil && m.DeletionTimestamp == nil && len(in.targets) == 0 &&
		(m.Status.Phase == kubevirtv1.MigrationPhaseUnset || m.Status.Phase == kubevirtv1.MigrationPending)
}

func (c *Controller) setStarting(key string, on bool) {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	c.setStartingLocked(key, on)
}

func (c *Controller) setStartingLocked(key string, on bool) {
	if on {
		c.starting[key] = true
	} else {
		delete(c.starting, key)
	}
}
