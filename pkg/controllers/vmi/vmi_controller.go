// Package vmi is the VirtualMachineInstance controller: it creates the launcher pod of each
// instance (exactly one, rendered by pkg/launcherpod), follows the pod to move the instance
// through Pending → Scheduling → Scheduled (pod bound; status.nodeName set, from which the
// apiserver mirrors the kubevirt.io/nodeName label), fails the instance when its pod fails or disappears before
// the node agent reported Running, and on deletion removes the pods before it lets the
// instance go (finalizer kubevirt.io/virtualMachineControllerFinalize).
//
// After Scheduled the node agent owns the phase; this controller then writes nothing but the
// finalizer and, during a live migration, status.activePods. A migration's target pod (label
// kubevirt.io/migrationJobUID, created by the migration controller) is not the instance's pod
// until the handover points status.nodeName at its node; this controller never deletes it nor
// fails the instance for it, and leaves the source pod that lingers after a handover to the
// migration controller.
package vmi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/conditions"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/expectations"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/podindex"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/vmis"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/wiring"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// Name is the controller's name in logs, events and metrics.
const Name = "virtualmachineinstance-controller"

// Controller is the VirtualMachineInstance controller.
type Controller struct {
	queue        *loop.Queue
	vmiLister    listers.VirtualMachineInstanceLister
	podIndexer   cache.Indexer
	synced       []cache.InformerSynced
	expectations *expectations.Expectations
	pods         podAPI
	// hotplug keeps attachment pods; nil until EnableHotplug.
	hotplug *hotplugAPI
	// dataVolumes finds the DataVolumes of dataVolume volumes; nil until EnableDataVolumes.
	dataVolumes  dataVolumesLookup
	meta         metadataAPI
	updateStatus func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (*kubevirtv1.VirtualMachineInstance, error)
	now          func() time.Time
	// podCreated remembers when this controller created an instance's pod, for the
	// schedulingGrace below (keys are removed once the instance leaves Pending).
	podCreatedMu sync.Mutex
	podCreated   map[string]time.Time
	// podEvents follow the launcher pods: each queues its instance.
	podEvents cache.ResourceEventHandlerFuncs
}

// schedulingGrace is how long a freshly created pod may stay unbound before the instance is
// written as Scheduling. kube-scheduler normally binds within milliseconds: waiting a moment lets
// Pending go straight to Scheduled, one status write per start instead of two. An unschedulable
// pod is reported (Scheduling, PodScheduled=False) once the grace has passed.
const schedulingGrace = time.Second

// New wires the controller to its informers. The pod informer should list launcher pods only
// (podindex.LauncherSelector); Run starts the controller.
func New(kubeClient kubernetes.Interface, client versioned.Interface, vmiInformer informers.VirtualMachineInstanceInformer,
	podInformer coreinformers.PodInformer, cfg launcherpod.Config, nads NetworkAttachmentLookup, recorder record.EventRecorder) (*Controller, error) {
	if err := podindex.Ensure(podInformer.Informer()); err != nil {
		return nil, err
	}
	c := &Controller{
		vmiLister:    vmiInformer.Lister(),
		podIndexer:   podInformer.Informer().GetIndexer(),
		synced:       []cache.InformerSynced{vmiInformer.Informer().HasSynced, podInformer.Informer().HasSynced},
		expectations: expectations.New(),
		now:          time.Now,
		podCreated:   map[string]time.Time{},
	}
	c.queue = loop.New(Name, c.sync)
	c.podEvents = wiring.Children(c.queue, c.expectations, ownerKey, nil)
	c.pods = podAPI{
		create: func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
			return kubeClient.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		},
		delete: func(ctx context.Context, namespace, name string, uid types.UID, grace *int64) error {
			return kubeClient.CoreV1().Pods(namespace).Delete(ctx, name,
				metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, GracePeriodSeconds: grace})
		},
		event: func(vmi *kubevirtv1.VirtualMachineInstance, eventType, reason, message string) {
			recorder.Event(vmi, eventType, reason, message)
		},
		render:    renderer(cfg),
		nadExists: nads,
		exp:       c.expectations,
	}
	c.meta = metadataAPI{patch: func(ctx context.Context, namespace, name string, data []byte) (*kubevirtv1.VirtualMachineInstance, error) {
		return client.KubevirtV1().VirtualMachineInstances(namespace).Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{})
	}}
	c.updateStatus = func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (*kubevirtv1.VirtualMachineInstance, error) {
		return client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, vmi, metav1.UpdateOptions{})
	}

	err := wiring.Register(
		wiring.Handler{Informer: vmiInformer.Informer(), Handler: wiring.Own(c.queue, c.vmiChanged)},
		wiring.Handler{Informer: podInformer.Informer(), Handler: c.podEvents})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Run syncs instances with workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.queue.Run(ctx, workers, c.synced...)
}

// vmiChanged handles an add or an update of an instance (wiring.Changed).
func (c *Controller) vmiChanged(obj any) {
	wiring.Changed[*kubevirtv1.VirtualMachineInstance](c.queue, c.expectations, obj)
}

// ownerKey is the key of the instance controlling pod, or "".
func ownerKey(pod *corev1.Pod) string {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != "VirtualMachineInstance" || ref.APIVersion != kubevirtv1.SchemeGroupVersion.String() {
		return ""
	}
	return pod.Namespace + "/" + ref.Name
}

// sync reconciles one instance: finalize it when deleted, else make sure it has its pod and
// write the status its pod implies.
func (c *Controller) sync(ctx context.Context, key string) (loop.Result, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return loop.Result{}, nil
	}
	cached, err := c.vmiLister.VirtualMachineInstances(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Delete(key)
		c.forgetPodCreated(key)
		return loop.Result{}, nil
	}
	if err != nil {
		return loop.Result{}, err
	}
	if !c.expectations.Satisfied(key) {
		// The cache lags behind our own last writes; the event that catches it up requeues.
		return loop.Result{RequeueAfter: expectations.RecheckAfter}, nil
	}
	vmi := cached.DeepCopy()
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("vmi", klog.KObj(vmi)))
	pods, err := podindex.PodsOf(c.podIndexer, string(vmi.UID))
	if err != nil {
		return loop.Result{}, err
	}

	if vmi.DeletionTimestamp != nil {
		return loop.Result{}, c.finalize(ctx, key, vmi, pods)
	}
	if vmis.IsFinal(vmi) {
		// The guest is gone for good; a launcher still running is stopped.
		_, err := c.pods.deletePods(ctx, key, vmi, livePods(pods))
		return loop.Result{}, err
	}
	if !hasFinalizer(vmi) {
		// Instances of VMs and replica sets carry it from birth; standalone ones get it here.
		if vmi, err = c.meta.setFinalizer(ctx, vmi, true); err != nil {
			return loop.Result{}, fmt.Errorf("adding the finalizer: %w", err)
		}
		c.expectations.ExpectVersion(key, vmi.ResourceVersion)
	}
	dvs, dvsUsable, err := dataVolumesOf(c.dataVolumes, vmi)
	if err != nil {
		return loop.Result{}, err
	}
	before := len(pods)
	if dvsUsable { // else the pod waits for the DataVolumes (their events requeue)
		pods, err = c.pods.ensurePod(ctx, key, vmi, pods)
	}
	if errors.Is(err, errNetworkAttachmentMissing) {
		// Pending, saying which network is missing; retried with back-off until it exists.
		return loop.Result{}, errors.Join(err, c.writeStatus(ctx, key, vmi, func(st *kubevirtv1.VirtualMachineInstanceStatus) {
			setSynchronizedFailure(st, err)
		}))
	}
	if err != nil {
		return loop.Result{}, err
	}
	if len(pods) > before {
		c.notePodCreated(key)
	}

	if c.hotplug != nil {
		if err := c.hotplug.syncAttachmentPods(ctx, vmi, currentPod(vmi, pods)); err != nil {
			return loop.Result{}, err
		}
	}

	status := computeStatus(vmi, pods, c.now())
	setDataVolumesReady(&status, dvs, c.now())
	if len(pods) > 0 {
		setSynchronizedFailure(&status, nil)
	}
	if wait := c.schedulingWait(key, &vmi.Status, &status); wait > 0 {
		// The binding's pod event brings the instance back sooner in the normal case.
		return loop.Result{RequeueAfter: wait}, nil
	}
	if status.Phase != kubevirtv1.Pending && status.Phase != kubevirtv1.VmPhaseUnset {
		c.forgetPodCreated(key)
	}
	if !statusEqual(&vmi.Status, &status) && (writeWorthy(&vmi.Status, &status) || dataVolumesReadyChanged(&vmi.Status, &status)) {
		if status.Phase != vmi.Status.Phase {
			klog.FromContext(ctx).V(2).Info("Phase changed", "from", vmi.Status.Phase, "to", status.Phase, "reason", status.Reason)
			if status.Reason == ReasonCopyFailed {
				c.reportFailedCopy(ctx, vmi, currentPod(vmi, pods))
			}
		}
		vmi.Status = status
		if vmi, err = c.updateStatus(ctx, vmi); err != nil {
			return loop.Result{}, fmt.Errorf("updating the instance status: %w", err)
		}
		c.expectations.ExpectVersion(key, vmi.ResourceVersion)
	}
	return loop.Result{}, nil
}

// writeStatus writes the instance's computed status (no pod) changed by change, when that
// differs from what it has.
func (c *Controller) writeStatus(ctx context.Context, key string, vmi *kubevirtv1.VirtualMachineInstance,
	change func(*kubevirtv1.VirtualMachineInstanceStatus)) error {
	status := computeStatus(vmi, nil, c.now())
	change(&status)
	if statusEqual(&vmi.Status, &status) {
		return nil
	}
	vmi = vmi.DeepCopy()
	vmi.Status = status
	updated, err := c.updateStatus(ctx, vmi)
	if err != nil {
		return fmt.Errorf("updating the instance status: %w", err)
	}
	c.expectations.ExpectVersion(key, updated.ResourceVersion)
	return nil
}

// reportFailedCopy says which copy of the launcher pod failed and why, as a warning event of
// the instance and in the log.
func (c *Controller) reportFailedCopy(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod) {
	if pod == nil {
		return
	}
	cs := failedCopy(pod)
	if cs == nil {
		return
	}
	t := cs.State.Terminated
	msg := fmt.Sprintf("container %s of pod %s ended with exit code %d (%s) before the guest started", cs.Name, pod.Name, t.ExitCode, t.Reason)
	if t.Message != "" {
		msg += ": " + t.Message
	}
	klog.FromContext(ctx).Info("A copy of the launcher pod failed", "vmi", klog.KObj(vmi), "detail", msg)
	c.pods.event(vmi, corev1.EventTypeWarning, ReasonCopyFailed, msg)
}

func (c *Controller) notePodCreated(key string) {
	c.podCreatedMu.Lock()
	defer c.podCreatedMu.Unlock()
	c.podCreated[key] = c.now()
}

func (c *Controller) forgetPodCreated(key string) {
	c.podCreatedMu.Lock()
	defer c.podCreatedMu.Unlock()
	delete(c.podCreated, key)
}

// schedulingWait is how much longer to hold back a Pending → Scheduling write (0: write now).
func (c *Controller) schedulingWait(key string, old, updated *kubevirtv1.VirtualMachineInstanceStatus) time.Duration {
	if updated.Phase != kubevirtv1.Scheduling || (old.Phase != kubevirtv1.Pending && old.Phase != kubevirtv1.VmPhaseUnset) {
		return 0
	}
	if cond := conditions.VMI(updated, podScheduled); cond != nil && cond.Status == corev1.ConditionFalse {
		return 0 // the scheduler already said why it cannot place the pod: report it at once
	}
	c.podCreatedMu.Lock()
	created, ok := c.podCreated[key]
	c.podCreatedMu.Unlock()
	if !ok {
		return 0
	}
	return schedulingGrace - c.now().Sub(created)
}

// finalize deletes the pods of a deleted instance and removes the finalizer once none is left:
// until then the instance exists, and its VM creates no successor (fencing).
func (c *Controller) finalize(ctx context.Context, key string, vmi *kubevirtv1.VirtualMachineInstance, pods []*corev1.Pod) error {
	remaining, err := c.pods.deletePods(ctx, key, vmi, pods)
	if err != nil || remaining {
		// The pods' deletion events bring the instance back.
		return err
	}
	if !hasFinalizer(vmi) {
		return nil
	}
	released, err := c.meta.setFinalizer(ctx, vmi, false)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing the finalizer: %w", err)
	}
	if released != nil && released.DeletionTimestamp != nil && len(released.Finalizers) > 0 {
		// Other finalizers keep it a while; do not act on the older cached copy meanwhile.
		c.expectations.ExpectVersion(key, released.ResourceVersion)
	}
	klog.FromContext(ctx).V(2).Info("No launcher pod left; released the instance")
	return nil
}
