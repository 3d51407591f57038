package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/util/retry"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/subresource"
)

// GetUpdater reads and writes one resource (the VM store or its /status store).
type GetUpdater interface {
	rest.Getter
	rest.Updater
}

// InstanceStore is what the executor needs of the VirtualMachineInstance store.
type InstanceStore interface {
	rest.Getter
	rest.Updater
	rest.GracefulDeleter
}

// PodDeleter force-deletes the launcher pods of an instance. It is nil when the apiserver has no
// Kubernetes API to talk to (standalone mode): actions that need it answer 503.
type PodDeleter interface {
	DeleteLauncherPods(ctx context.Context, namespace string, vmiUID types.UID, dryRun bool) error
}

// Executor applies lifecycle plans to the stores.
type Executor struct {
	VMs        GetUpdater
	VMStatus   rest.Updater
	Instances  InstanceStore
	Migrations rest.Creater
	Pods       PodDeleter
}

// decideFunc is one of the Plan* functions with its options bound.
type decideFunc func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error)

// decisionError marks an error of the decision itself, so that a 409 such as "VM is already
// running" is answered, not retried as a write conflict. It deliberately has no Unwrap: the
// retry loop must not see the conflict inside.
type decisionError struct{ err error }

func (e decisionError) Error() string { return e.err.Error() }

// Run reads the VM and its instance, decides, and writes the VM; a write conflict re-reads
// both and decides again. Side effects on other objects (instance and pod deletion, migration
// creation) follow the successful VM write.
func (e *Executor) Run(ctx context.Context, namespace, name string, dryRun bool, decide decideFunc) error {
	ctx = genericapirequest.WithNamespace(ctx, namespace)
	var plan Plan
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vm, vmi, err := e.read(ctx, name)
		if err != nil {
			return decisionError{err}
		}
		plan, err = decide(vm, vmi)
		if err != nil {
			return decisionError{err}
		}
		if plan.needsPods() && e.Pods == nil {
			return decisionError{apierrors.NewServiceUnavailable(
				"force stop and force restart delete launcher pods and need the Kubernetes API, which this apiserver was started without (--standalone)")}
		}
		return e.writeVM(ctx, vm, plan, dryRun)
	})
	var de decisionError
	if errors.As(err, &de) {
		return de.err
	}
	if err != nil {
		return err
	}
	return e.sideEffects(ctx, name, plan, dryRun)
}

func (e *Executor) read(ctx context.Context, name string) (*kubevirtv1.VirtualMachine, *kubevirtv1.VirtualMachineInstance, error) {
	obj, err := e.VMs.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	vm, ok := obj.(*kubevirtv1.VirtualMachine)
	if !ok {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("VM store returned %T", obj))
	}
	obj, err = e.Instances.Get(ctx, name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return vm, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance)
	if !ok {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("instance store returned %T", obj))
	}
	return vm, vmi, nil
}

// writeVM writes the plan's spec and status changes, each conditional on the resourceVersion
// the decision was made on.
func (e *Executor) writeVM(ctx context.Context, vm *kubevirtv1.VirtualMachine, plan Plan, dryRun bool) error {
	opts := &metav1.UpdateOptions{DryRun: subresource.DryRunOption(dryRun)}
	// Each write goes on from the object the previous one returned.
	next := func(obj runtime.Object) {
		if v, ok := obj.(*kubevirtv1.VirtualMachine); ok && !dryRun {
			vm = v
		}
	}
	writeSpec := func() error {
		if plan.SetRunning == nil {
			return nil
		}
		updated := vm.DeepCopy()
		setRunning(updated, *plan.SetRunning)
		obj, _, err := e.VMs.Update(ctx, vm.Name, rest.DefaultUpdatedObjectInfo(updated),
			rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, opts)
		next(obj)
		return err
	}
	writeRequests := func() error {
		if !plan.WriteRequests {
			return nil
		}
		updated := vm.DeepCopy()
		updated.Status.StateChangeRequests = plan.Requests
		// A new request starts over: the back-off of earlier failed starts no longer applies.
		updated.Status.StartFailure = nil
		obj, _, err := e.VMStatus.Update(ctx, vm.Name, rest.DefaultUpdatedObjectInfo(updated),
			rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, opts)
		next(obj)
		return err
	}
	// Requests go first when the VM is turned to running (see Plan.SetRunning).
	first, second := writeSpec, writeRequests
	if plan.SetRunning != nil && *plan.SetRunning {
		first, second = writeRequests, writeSpec
	}
	if err := first(); err != nil {
		return err
	}
	return second()
}

// setRunning rewrites the run strategy in the field the VM uses.
func setRunning(vm *kubevirtv1.VirtualMachine, running bool) {
	if vm.Spec.RunStrategy != nil {
		s := kubevirtv1.RunStrategyHalted
		if running {
			s = kubevirtv1.RunStrategyAlways
		}
		vm.Spec.RunStrategy = &s
		return
	}
	vm.Spec.Running = &running
}

func (e *Executor) sideEffects(ctx context.Context, name string, plan Plan, dryRun bool) error {
	if plan.DeleteInstance != nil {
		if err := e.deleteInstance(ctx, name, plan.InstanceUID, *plan.DeleteInstance, dryRun); err != nil {
			return err
		}
	}
	if plan.DeletePods {
		ns, _ := genericapirequest.NamespaceFrom(ctx)
		if err := e.Pods.DeleteLauncherPods(ctx, ns, plan.InstanceUID, dryRun); err != nil {
			return err
		}
	}
	if plan.Migrate {
		return e.createMigration(ctx, name, plan.MigrateNodeSelector, dryRun)
	}
	return nil
}

// deleteInstance records the grace period on the instance (its spec is immutable, and the
// generic store keeps no grace period for objects with finalizers), then deletes it. A gone
// or replaced instance means someone else finished the job.
func (e *Executor) deleteInstance(ctx context.Context, name string, uid types.UID, grace int64, dryRun bool) error {
	obj, err := e.Instances.Get(ctx, name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance)
	if !ok || vmi.UID != uid {
		return nil
	}
	if current, set := vmi.Annotations[StopGracePeriodAnnotation]; !set || current != strconv.FormatInt(grace, 10) {
		updated := vmi.DeepCopy()
		if updated.Annotations == nil {
			updated.Annotations = map[string]string{}
		}
		updated.Annotations[StopGracePeriodAnnotation] = strconv.FormatInt(grace, 10)
		_, _, err := e.Instances.Update(ctx, name, rest.DefaultUpdatedObjectInfo(updated),
			rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false,
			&metav1.UpdateOptions{DryRun: subresource.DryRunOption(dryRun)})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil && !apierrors.IsConflict(err) {
			return err
		}
	}
	_, _, err = e.Instances.Delete(ctx, name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{
		GracePeriodSeconds: &grace,
		Preconditions:      &metav1.Preconditions{UID: &uid},
		DryRun:             subresource.DryRunOption(dryRun),
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

func (e *Executor) createMigration(ctx context.Context, name string, nodeSelector map[string]string, dryRun bool) error {
	ns, _ := genericapirequest.NamespaceFrom(ctx)
	mig := &kubevirtv1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "kubevirt-migrate-vm-", Namespace: ns},
		Spec:       kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: name, AddedNodeSelector: nodeSelector},
	}
	_, err := e.Migrations.Create(ctx, mig, rest.ValidateAllObjectFunc,
		&metav1.CreateOptions{DryRun: subresource.DryRunOption(dryRun)})
	return err
}
