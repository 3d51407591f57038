// Package vm is the VirtualMachine controller: it keeps at most one VirtualMachineInstance per
// VM according to the run strategy and the start/stop/restart requests queued by the apiserver's
// subresources, never creating a new instance while the old one still exists (fencing), and it
// writes the VM's status (created, ready, printableStatus, conditions, start failure back-off).
//
// One sync does at most one instance write and at most one status write; a status identical to
// the stored one is not written.
package vm

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	cdiinformers "github.com/nativevirt/nativevirt/pkg/client/informers/externalversions/cdi/v1beta1"
	informers "github.com/nativevirt/nativevirt/pkg/client/informers/externalversions/kubevirt/v1"
	listers "github.com/nativevirt/nativevirt/pkg/client/listers/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/expectations"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/wiring"
)

// Name is the controller's name in logs, events and metrics.
const Name = "virtualmachine-controller"

// Controller is the VirtualMachine controller.
type Controller struct {
	queue        *loop.Queue
	vmLister     listers.VirtualMachineLister
	vmiLister    listers.VirtualMachineInstanceLister
	synced       []cache.InformerSynced
	expectations *expectations.Expectations
	instances    instanceAPI
	// dataVolumes creates the VM's DataVolumes and reads their state; its get is nil in tests
	// without DataVolumes.
	dataVolumes dataVolumeAPI
	// instancetypes resolves the VM's instance type and preference; nil in tests without them.
	instancetypes *instancetypeAPI
	// updateStatus writes the VM status and returns the new resourceVersion.
	updateStatus func(ctx context.Context, vm *kubevirtv1.VirtualMachine) (string, error)
	now          func() time.Time
	// vmiEvents follow the instances: each queues its VM.
	vmiEvents cache.ResourceEventHandlerFuncs
}

// New wires the controller to its informers; Run starts it.
func New(kube kubernetes.Interface, client versioned.Interface, vmInformer informers.VirtualMachineInformer,
	vmiInformer informers.VirtualMachineInstanceInformer, recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{
		vmLister:     vmInformer.Lister(),
		vmiLister:    vmiInformer.Lister(),
		synced:       []cache.InformerSynced{vmInformer.Informer().HasSynced, vmiInformer.Informer().HasSynced},
		expectations: expectations.New(),
		now:          time.Now,
	}
	c.queue = loop.New(Name, c.sync)
	// An instance always has the name of its VM, so the VM's key is the instance's key; that
	// also reaches a VM re-created after an orphaning delete, which adopts the instance.
	c.vmiEvents = wiring.Children(c.queue, c.expectations, func(vmi *kubevirtv1.VirtualMachineInstance) string {
		return cache.MetaObjectToName(vmi).String()
	}, nil)
	c.instancetypes = newInstancetypeAPI(kube, client)
	c.instances = instanceAPI{
		create: func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (*kubevirtv1.VirtualMachineInstance, error) {
			return client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Create(ctx, vmi, metav1.CreateOptions{})
		},
		delete: func(ctx context.Context, namespace, name string, uid types.UID) error {
			return client.KubevirtV1().VirtualMachineInstances(namespace).Delete(ctx, name,
				metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		},
		patch: func(ctx context.Context, namespace, name string, data []byte) (*kubevirtv1.VirtualMachineInstance, error) {
			return client.KubevirtV1().VirtualMachineInstances(namespace).Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{})
		},
		getVM: func(ctx context.Context, namespace, name string) (*kubevirtv1.VirtualMachine, error) {
			return client.KubevirtV1().VirtualMachines(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		event: func(vm *kubevirtv1.VirtualMachine, eventType, reason, message string) {
			recorder.Event(vm, eventType, reason, message)
		},
		expand: c.instancetypes.expand,
	}
	c.updateStatus = wiring.ResourceVersionOf(func(ctx context.Context, vm *kubevirtv1.VirtualMachine) (*kubevirtv1.VirtualMachine, error) {
		return client.KubevirtV1().VirtualMachines(vm.Namespace).UpdateStatus(ctx, vm, metav1.UpdateOptions{})
	})
	err := wiring.Register(
		wiring.Handler{Informer: vmInformer.Informer(), Handler: wiring.Own(c.queue, c.vmChanged)},
		wiring.Handler{Informer: vmiInformer.Informer(), Handler: c.vmiEvents})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// dataVolumeRecheck is how often a VM waiting for DataVolumes or claims looks at them again
// when no event of its own DataVolumes comes.
const dataVolumeRecheck = 10 * time.Second

// UseDataVolumes lets the controller create the DataVolumes of dataVolumeTemplates and follow
// them and the claims of the VMs' volumes. A DataVolume controlled by a VM queues that VM.
func (c *Controller) UseDataVolumes(client versioned.Interface, dvInformer cdiinformers.DataVolumeInformer,
	claims corelisters.PersistentVolumeClaimLister, recorder record.EventRecorder) error {
	dvLister := dvInformer.Lister()
	c.synced = append(c.synced, dvInformer.Informer().HasSynced)
	c.dataVolumes = dataVolumeAPI{
		get: func(namespace, name string) (*cdiv1beta1.DataVolume, error) {
			return dvLister.DataVolumes(namespace).Get(name)
		},
		claim: func(namespace, name string) (*corev1.PersistentVolumeClaim, error) {
			return claims.PersistentVolumeClaims(namespace).Get(name)
		},
		create: func(ctx context.Context, dv *cdiv1beta1.DataVolume) (*cdiv1beta1.DataVolume, error) {
			return client.CdiV1beta1().DataVolumes(dv.Namespace).Create(ctx, dv, metav1.CreateOptions{})
		},
		patch: func(ctx context.Context, namespace, name string, data []byte) error {
			_, err := client.CdiV1beta1().DataVolumes(namespace).Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{})
			return err
		},
		event: func(vm *kubevirtv1.VirtualMachine, eventType, reason, message string) {
			recorder.Event(vm, eventType, reason, message)
		},
	}
	queueOwner := func(obj any) {
		if dv, ok := wiring.Object[*cdiv1beta1.DataVolume](obj); ok {
			if ref := metav1.GetControllerOfNoCopy(dv); ref != nil && ref.Kind == "VirtualMachine" {
				c.queue.Add(dv.Namespace + "/" + ref.Name)
			}
		}
	}
	return wiring.Register(wiring.Handler{Informer: dvInformer.Informer(), Handler: cache.ResourceEventHandlerFuncs{
		AddFunc:    queueOwner,
		UpdateFunc: func(_, obj any) { queueOwner(obj) },
		DeleteFunc: queueOwner,
	}})
}

// Run syncs VMs with workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.queue.Run(ctx, workers, c.synced...)
}

// vmChanged handles an add or an update of a VM (wiring.Changed).
func (c *Controller) vmChanged(obj any) {
	wiring.Changed[*kubevirtv1.VirtualMachine](c.queue, c.expectations, obj)
}

// sync reconciles one VM: claim its instance, advance the start failure record, decide, act,
// and write the status computed from the outcome.
func (c *Controller) sync(ctx context.Context, key string) (loop.Result, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return loop.Result{}, nil
	}
	cached, err := c.vmLister.VirtualMachines(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Delete(key)
		return loop.Result{}, nil
	}
	if err != nil {
		return loop.Result{}, err
	}
	if !c.expectations.Satisfied(key) {
		// The cache lags behind our own last writes; the event that catches it up requeues.
		return loop.Result{RequeueAfter: expectations.RecheckAfter}, nil
	}
	vm := cached.DeepCopy()
	logger := klog.FromContext(ctx).WithValues("vm", klog.KObj(vm))
	ctx = klog.NewContext(ctx, logger)

	vmi, err := c.vmiLister.VirtualMachineInstances(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		vmi = nil
	} else if err != nil {
		return loop.Result{}, err
	}
	claimed, err := c.instances.claim(ctx, vm, vmi)
	if err != nil {
		return loop.Result{}, err
	}

	// DataVolumes are made from the templates whether or not the VM runs, as KubeVirt does.
	dvErr := c.dataVolumes.ensure(ctx, vm)
	vols, err := c.dataVolumes.state(vm)
	if err != nil {
		return loop.Result{}, err
	}

	now := c.now()
	strategy := RunStrategy(vm)
	in := statusInput{vm: vm, startFailure: nextStartFailure(vm.Status.StartFailure, strategy, claimed.vmi, now),
		runStrategy: strategy, now: now, volumes: &vols}
	// The revisions of the instance type and preference are captured as soon as the VM names
	// them, running or not, as KubeVirt does; a new instance is expanded from them.
	acting := vm
	var refsErr error
	if c.instancetypes != nil {
		var refs statusRefs
		if refs, refsErr = c.instancetypes.refs(ctx, vm); refsErr == nil {
			in.refs = &refs
			acting = withRefs(vm, refs)
		}
	}
	var p plan
	if claimed.foreign != nil {
		logger.V(2).Info("An instance of the VM's name belongs to another controller; waiting", "vmi", klog.KObj(claimed.foreign))
		in.requests = vm.Status.StateChangeRequests
	} else if p, err = c.act(ctx, key, acting, claimed.vmi, &in, refsErr); err != nil {
		return loop.Result{}, err
	}

	if err := c.writeStatus(ctx, key, in); err != nil {
		return loop.Result{}, err
	}
	for _, err := range []error{in.syncErr, dvErr, refsErr} {
		// A missing instance type or preference is retried with the queue's back-off.
		if err != nil {
			return loop.Result{}, err
		}
	}
	return loop.Result{RequeueAfter: p.requeueAfter}, nil
}

// act decides what the VM's own instance needs and does it, recording the outcome in `in`. An
// error is returned only when the sync must end without a status write.
func (c *Controller) act(ctx context.Context, key string, acting *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance, in *statusInput, refsErr error) (plan, error) {
	vm, vols := in.vm, in.volumes
	p := decide(vm, vmi, in.startFailure, in.now)
	if p.action == actCreate && !vols.ready {
		// The instance starts once its DataVolumes can be used; a pending start request
		// stays queued. DataVolume events requeue the VM, the recheck covers other ones.
		klog.FromContext(ctx).V(2).Info("Waiting for the VM's DataVolumes before starting it")
		p = plan{action: actNone, requests: vm.Status.StateChangeRequests, requeueAfter: dataVolumeRecheck}
	}
	in.requests = p.requests
	if p.requeueAfter == 0 && (vols.provisioning || vols.unbound || vols.missing) {
		// DataVolumes the VM does not own and claims send it no events.
		p.requeueAfter = dataVolumeRecheck
	}
	switch p.action {
	case actCreate:
		c.expectations.ExpectCreations(key, 1)
	case actDelete:
		c.expectations.ExpectDeletion(key, vmi.UID)
	}
	var reason string
	if p.action == actCreate && refsErr != nil {
		// Without its instance type or preference the instance cannot be built.
		in.vmi, reason, in.syncErr = nil, ReasonFailedCreate, refsErr
		c.instances.event(vm, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating virtual machine instance: "+refsErr.Error())
	} else {
		in.vmi, reason, in.syncErr = c.instances.execute(ctx, acting, vmi, p.action, p.startPaused, metav1.NewTime(in.now))
	}
	if in.syncErr != nil {
		// The awaited event will never come.
		if p.action == actCreate {
			c.expectations.CreationObserved(key)
		} else {
			c.expectations.DeletionObserved(key, vmi.UID)
		}
		if apierrors.IsAlreadyExists(in.syncErr) || apierrors.IsConflict(in.syncErr) {
			// Our cache is behind; not a failure worth a status write.
			return p, in.syncErr
		}
		in.syncErrReason = reason
		in.requests = vm.Status.StateChangeRequests
		if p.action == actCreate {
			// Keep the old strategy so that a RerunOnFailure VM retries its first start.
			in.runStrategy = vm.Status.RunStrategy
		}
		return p, nil
	}
	if p.action == actNone {
		if ch := planHotplug(vm, in.vmi); ch != nil {
			updated, err := c.instances.syncHotplug(ctx, vm, in.vmi, ch)
			if err != nil {
				return p, err
			}
			in.vmi = updated
		}
	}
	return p, nil
}

// writeStatus computes the VM's status from the sync's outcome and writes it when it changed,
// with the DataVolume failure events of a VM that has just turned DataVolumeError.
func (c *Controller) writeStatus(ctx context.Context, key string, in statusInput) error {
	vm := in.vm
	status := computeStatus(in)
	if status.PrintableStatus == kubevirtv1.VirtualMachineStatusDataVolumeError &&
		vm.Status.PrintableStatus != kubevirtv1.VirtualMachineStatusDataVolumeError {
		for _, name := range in.volumes.failed {
			c.dataVolumes.event(vm, corev1.EventTypeWarning, ReasonFailedDataVolumeImport,
				fmt.Sprintf("DataVolume %s failed to import disk image", name))
		}
	}
	if !statusChanged(&vm.Status, &status) {
		return nil
	}
	vm.Status = status
	rv, err := c.updateStatus(ctx, vm)
	if err != nil {
		return fmt.Errorf("updating VM status: %w", err)
	}
	c.expectations.ExpectVersion(key, rv)
	return nil
}
