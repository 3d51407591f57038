// Package replicaset is the VirtualMachineInstanceReplicaSet controller: it keeps
// spec.replicas active instances matching the selector, created from the template as
// <rs>-<random>, adopting matching orphans and releasing instances the selector no longer
// matches; finished instances are replaced; scale down removes the least useful first. The
// status carries replicas, readyReplicas and the selector string the /scale subresource serves.
package replicaset

import (
	"context"
	"fmt"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	informers "github.com/nativevirt/nativevirt/pkg/client/informers/externalversions/kubevirt/v1"
	listers "github.com/nativevirt/nativevirt/pkg/client/listers/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/expectations"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/vmis"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/wiring"
)

// Name is the controller's name in logs, events and metrics.
const Name = "virtualmachineinstancereplicaset-controller"

// Controller is the VirtualMachineInstanceReplicaSet controller.
type Controller struct {
	queue        *loop.Queue
	rsLister     listers.VirtualMachineInstanceReplicaSetLister
	vmiLister    listers.VirtualMachineInstanceLister
	synced       []cache.InformerSynced
	expectations *expectations.Expectations
	ownership    ownershipAPI
	replicas     replicaAPI
	// updateStatus writes the status and returns the new resourceVersion.
	updateStatus func(ctx context.Context, rs *kubevirtv1.VirtualMachineInstanceReplicaSet) (string, error)
	now          func() time.Time
	// vmiEvents follow the instances: their replica set is queued, an orphan's matching ones.
	vmiEvents cache.ResourceEventHandlerFuncs
}

// New wires the controller to its informers; Run starts it.
func New(client versioned.Interface, rsInformer informers.VirtualMachineInstanceReplicaSetInformer,
	vmiInformer informers.VirtualMachineInstanceInformer, recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{
		rsLister:     rsInformer.Lister(),
		vmiLister:    vmiInformer.Lister(),
		synced:       []cache.InformerSynced{rsInformer.Informer().HasSynced, vmiInformer.Informer().HasSynced},
		expectations: expectations.New(),
		now:          time.Now,
	}
	c.queue = loop.New(Name, c.sync)
	c.vmiEvents = wiring.Children(c.queue, c.expectations, ownerKey, func(vmi *kubevirtv1.VirtualMachineInstance) {
		if metav1.GetControllerOfNoCopy(vmi) == nil {
			c.enqueueMatching(vmi)
		}
	})
	c.ownership = ownershipAPI{
		patch: func(ctx context.Context, namespace, name string, data []byte) (*kubevirtv1.VirtualMachineInstance, error) {
			return client.KubevirtV1().VirtualMachineInstances(namespace).Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{})
		},
		getRS: func(ctx context.Context, namespace, name string) (*kubevirtv1.VirtualMachineInstanceReplicaSet, error) {
			return client.KubevirtV1().VirtualMachineInstanceReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
		},
	}
	c.replicas = replicaAPI{
		create: func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (*kubevirtv1.VirtualMachineInstance, error) {
			return client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Create(ctx, vmi, metav1.CreateOptions{})
		},
		delete: func(ctx context.Context, namespace, name string, uid types.UID) error {
			return client.KubevirtV1().VirtualMachineInstances(namespace).Delete(ctx, name,
				metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		},
		event: func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet, eventType, reason, message string) {
			recorder.Event(rs, eventType, reason, message)
		},
		exp: c.expectations,
	}
	c.updateStatus = wiring.ResourceVersionOf(func(ctx context.Context, rs *kubevirtv1.VirtualMachineInstanceReplicaSet) (*kubevirtv1.VirtualMachineInstanceReplicaSet, error) {
		return client.KubevirtV1().VirtualMachineInstanceReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
	})
	err := wiring.Register(
		wiring.Handler{Informer: rsInformer.Informer(), Handler: wiring.Own(c.queue, c.rsChanged)},
		wiring.Handler{Informer: vmiInformer.Informer(), Handler: c.vmiEvents})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Run syncs replica sets with workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.queue.Run(ctx, workers, c.synced...)
}

// rsChanged handles an add or an update of a replica set (wiring.Changed).
func (c *Controller) rsChanged(obj any) {
	wiring.Changed[*kubevirtv1.VirtualMachineInstanceReplicaSet](c.queue, c.expectations, obj)
}

// ownerKey is the key of the replica set controlling vmi, or "".
func ownerKey(vmi *kubevirtv1.VirtualMachineInstance) string {
	ref := metav1.GetControllerOfNoCopy(vmi)
	if ref == nil || ref.Kind != rsKind {
		return ""
	}
	return vmi.Namespace + "/" + ref.Name
}

// enqueueMatching queues the replica sets whose selector matches an orphan, so they adopt it.
func (c *Controller) enqueueMatching(vmi *kubevirtv1.VirtualMachineInstance) {
	sets, err := c.rsLister.VirtualMachineInstanceReplicaSets(vmi.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, rs := range sets {
		sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil || sel.Empty() {
			continue
		}
		if sel.Matches(labels.Set(vmi.Labels)) {
			c.queue.AddObject(rs)
		}
	}
}

// sync reconciles one replica set: claim instances, replace finished ones, scale, and write
// the status computed from the outcome.
func (c *Controller) sync(ctx context.Context, key string) (loop.Result, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return loop.Result{}, nil
	}
	cached, err := c.rsLister.VirtualMachineInstanceReplicaSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Delete(key)
		return loop.Result{}, nil
	}
	if err != nil {
		return loop.Result{}, err
	}
	if !c.expectations.VersionSatisfied(key) {
		// The cache has not caught up with our own status write; its event requeues.
		return loop.Result{RequeueAfter: expectations.RecheckAfter}, nil
	}
	rs := cached.DeepCopy()
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("vmirs", klog.KObj(rs)))
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil || selector.Empty() {
		// Validation refuses such selectors; an empty one would claim every instance.
		klog.FromContext(ctx).Error(err, "Invalid selector; ignoring the replica set")
		return loop.Result{}, nil
	}
	all, err := c.vmiLister.VirtualMachineInstances(namespace).List(labels.Everything())
	if err != nil {
		return loop.Result{}, err
	}
	owned, claimErr := c.ownership.claim(ctx, rs, selector, all)

	var active, finished []*kubevirtv1.VirtualMachineInstance
	for _, vmi := range owned {
		switch {
		case vmis.IsTerminating(vmi):
		case vmis.IsFinal(vmi):
			finished = append(finished, vmi)
		default:
			active = append(active, vmi)
		}
	}

	var failReason string
	var failure error
	var res loop.Result
	switch {
	case !c.expectations.CreatesDeletesSatisfied(key):
		res.RequeueAfter = expectations.RecheckAfter
	case !rs.Spec.Paused && rs.DeletionTimestamp == nil && claimErr == nil:
		p := planScale(Replicas(rs), active)
		failReason, failure = c.replicas.execute(ctx, key, rs, p, finished)
	}

	status := computeStatus(rs, active, metav1.FormatLabelSelector(rs.Spec.Selector), failReason, failure, c.now())
	if !apiequality.Semantic.DeepEqual(rs.Status, status) {
		rs.Status = status
		rv, err := c.updateStatus(ctx, rs)
		if err != nil {
			return loop.Result{}, fmt.Errorf("updating the replica set status: %w", err)
		}
		c.expectations.ExpectVersion(key, rv)
	}
	if claimErr != nil {
		return loop.Result{}, claimErr
	}
	return res, failure
}
