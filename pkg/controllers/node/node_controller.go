// Package node watches the node agents' heartbeats: a node whose kubevirt.io/heartbeat
// annotation is older than 120 s (or missing while the node is labelled
// kubevirt.io/schedulable=true) is labelled kubevirt.io/schedulable=false, so that no new
// launcher pod lands there, and the instances on a dead node whose launcher pods are gone are
// failed, since no node agent will ever report on them again.
package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	informers "github.com/nativevirt/nativevirt/pkg/client/informers/externalversions/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/podindex"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/wiring"
)

// Name is the controller's name in logs and metrics.
const Name = "node-heartbeat-controller"

// byNodeName indexes instances by status.nodeName.
const byNodeName = "nodeName"

// Controller is the node heartbeat controller.
type Controller struct {
	queue      *loop.Queue
	nodeLister corelisters.NodeLister
	vmiIndexer cache.Indexer
	podIndexer cache.Indexer
	synced     []cache.InformerSynced
	// markUnschedulable labels the node kubevirt.io/schedulable=false.
	markUnschedulable func(ctx context.Context, node string) error
	// failVMI writes an instance's status.
	failVMI func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) error
	now     func() time.Time
}

// New wires the controller to its informers (the pod informer lists launcher pods only); Run
// starts it.
func New(kubeClient kubernetes.Interface, client versioned.Interface, nodeInformer coreinformers.NodeInformer,
	vmiInformer informers.VirtualMachineInstanceInformer, podInformer coreinformers.PodInformer) (*Controller, error) {
	if err := podindex.Ensure(podInformer.Informer()); err != nil {
		return nil, err
	}
	if _, ok := vmiInformer.Informer().GetIndexer().GetIndexers()[byNodeName]; !ok {
		if err := vmiInformer.Informer().AddIndexers(cache.Indexers{byNodeName: func(obj any) ([]string, error) {
			if vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance); ok && vmi.Status.NodeName != "" {
				return []string{vmi.Status.NodeName}, nil
			}
			return nil, nil
		}}); err != nil {
			return nil, err
		}
	}
	c := &Controller{
		nodeLister: nodeInformer.Lister(),
		vmiIndexer: vmiInformer.Informer().GetIndexer(),
		podIndexer: podInformer.Informer().GetIndexer(),
		synced: []cache.InformerSynced{nodeInformer.Informer().HasSynced, vmiInformer.Informer().HasSynced,
			podInformer.Informer().HasSynced},
		now: time.Now,
	}
	c.queue = loop.New(Name, c.sync)
	c.markUnschedulable = func(ctx context.Context, node string) error {
		data, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{SchedulableLabel: "false"}}})
		if err != nil {
			return err
		}
		_, err = kubeClient.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, data, metav1.PatchOptions{})
		return err
	}
	c.failVMI = func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) error {
		_, err := client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, vmi, metav1.UpdateOptions{})
		return err
	}

	err := wiring.Register(
		wiring.Handler{Informer: nodeInformer.Informer(), Handler: wiring.Own(c.queue, c.queue.AddObject)},
		// An instance landing on a node, or a launcher pod leaving one, may complete the picture
		// of a dead node.
		wiring.Handler{Informer: vmiInformer.Informer(), Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.enqueueNodeOfVMI(obj) },
			UpdateFunc: func(_, cur any) { c.enqueueNodeOfVMI(cur) },
		}},
		// A launcher pod leaving the API, or ending there (its phase or every container
		// terminated), no longer runs its guest.
		wiring.Handler{Informer: podInformer.Informer(), Handler: cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(old, cur any) {
				o, ok1 := wiring.Object[*corev1.Pod](old)
				n, ok2 := wiring.Object[*corev1.Pod](cur)
				if ok1 && ok2 && podMayRun(o) && !podMayRun(n) {
					c.enqueueNodeOfPod(cur)
				}
			},
			DeleteFunc: c.enqueueNodeOfPod,
		}})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Run syncs nodes with workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.queue.Run(ctx, workers, c.synced...)
}

func (c *Controller) enqueueNodeOfVMI(obj any) {
	if vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance); ok && vmi.Status.NodeName != "" {
		c.queue.Add(vmi.Status.NodeName)
	}
}

func (c *Controller) enqueueNodeOfPod(obj any) {
	if pod, ok := wiring.Object[*corev1.Pod](obj); ok && pod.Spec.NodeName != "" {
		c.queue.Add(pod.Spec.NodeName)
	}
}

// sync judges one node (the key is its name): mark it unschedulable when its agent is gone, and
// fail the instances on it whose launcher pods can no longer run (gone from the API, or ended).
// A pod that may still run there keeps its instance as it is, whatever the node's state: its
// guest may be running, and failing the instance would start a second one elsewhere. A live node is looked at again when its
// heartbeat would go stale.
func (c *Controller) sync(ctx context.Context, name string) (loop.Result, error) {
	logger := klog.FromContext(ctx).WithValues("node", name)
	now := c.now()
	node, err := c.nodeLister.Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return loop.Result{}, err
	}
	dead := node == nil
	var res loop.Result
	if node != nil {
		hb := heartbeat(node, now)
		dead = hb.stale
		if shouldMarkUnschedulable(node, hb) {
			logger.Info("Node agent heartbeat is stale; marking the node unschedulable",
				"heartbeat", node.Annotations[HeartbeatAnnotation])
			if err := c.markUnschedulable(ctx, name); err != nil && !apierrors.IsNotFound(err) {
				return loop.Result{}, fmt.Errorf("marking node %s unschedulable: %w", name, err)
			}
		}
		if !hb.stale && node.Labels[SchedulableLabel] == "true" {
			res.RequeueAfter = hb.recheckIn
		}
	}
	if !dead {
		return res, nil
	}
	objs, err := c.vmiIndexer.ByIndex(byNodeName, name)
	if err != nil {
		return loop.Result{}, err
	}
	onNode := make([]*kubevirtv1.VirtualMachineInstance, 0, len(objs))
	for _, o := range objs {
		if vmi, ok := o.(*kubevirtv1.VirtualMachineInstance); ok {
			onNode = append(onNode, vmi)
		}
	}
	podCount := func(uid string) int {
		pods, _ := podindex.PodsOf(c.podIndexer, uid)
		n := 0
		for _, p := range pods {
			if podMayRun(p) {
				n++
			}
		}
		return n
	}
	var errs []error
	for _, vmi := range orphanedInstances(onNode, podCount) {
		failed := vmi.DeepCopy()
		failed.Status = failedStatus(vmi, now)
		if err := c.failVMI(ctx, failed); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
			continue
		}
		logger.Info("Failed an instance whose node agent is gone and whose launcher pod can no longer run", "vmi", klog.KObj(vmi))
	}
	return res, errors.Join(errs...)
}
