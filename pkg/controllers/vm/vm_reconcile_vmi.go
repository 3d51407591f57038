package vm

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/ownerref"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/vmis"
)

// vmKind is the kind named in the owner reference of a VM's instance.
const vmKind = "VirtualMachine"

// instanceAPI is what the instance reconciler writes, as function fields so that tests are
// tables of stubs.
type instanceAPI struct {
	// create creates an instance.
	create func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (*kubevirtv1.VirtualMachineInstance, error)
	// delete deletes the instance namespace/name if it still has uid.
	delete func(ctx context.Context, namespace, name string, uid types.UID) error
	// patch applies a JSON merge patch to an instance (adoption).
	patch func(ctx context.Context, namespace, name string, data []byte) (*kubevirtv1.VirtualMachineInstance, error)
	// getVM reads the VM from the server, bypassing the cache (before adopting).
	getVM func(ctx context.Context, namespace, name string) (*kubevirtv1.VirtualMachine, error)
	// event records an event on the VM.
	event func(vm *kubevirtv1.VirtualMachine, eventType, reason, message string)
	// expand fills a new instance from the VM's instance type and preference; nil in tests
	// without them.
	expand func(ctx context.Context, vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) error
}

// claimResult is the instance a VM may act on.
type claimResult struct {
	// vmi is the VM's own instance (possibly just adopted), or nil.
	vmi *kubevirtv1.VirtualMachineInstance
	// foreign is an instance of the VM's name controlled by something else; the VM cannot
	// create its own while it exists.
	foreign *kubevirtv1.VirtualMachineInstance
}

// claim sorts the instance named like the VM into own, adopted or foreign. An instance without
// a controller (left by `kubectl delete vm --cascade=orphan`) is adopted, after a fresh read of
// the VM proves it is neither replaced nor being deleted: adopting for a stale VM would hand the
// instance to an owner the garbage collector then finds missing.
func (a *instanceAPI) claim(ctx context.Context, vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (claimResult, error) {
	if vmi == nil {
		return claimResult{}, nil
	}
	if ownerref.IsControlledBy(vmi, vm.UID) {
		return claimResult{vmi: vmi}, nil
	}
	if metav1.GetControllerOfNoCopy(vmi) != nil {
		return claimResult{foreign: vmi}, nil
	}
	if vm.DeletionTimestamp != nil || vmis.IsTerminating(vmi) {
		return claimResult{foreign: vmi}, nil
	}
	fresh, err := a.getVM(ctx, vm.Namespace, vm.Name)
	if err != nil {
		return claimResult{}, fmt.Errorf("re-reading the VM before adopting its instance: %w", err)
	}
	if fresh.UID != vm.UID || fresh.DeletionTimestamp != nil {
		return claimResult{foreign: vmi}, nil
	}
	data, err := ownerref.AdoptPatch(vmi, ownerref.Controller(kubevirtv1.SchemeGroupVersion.String(), vmKind, vm))
	if err != nil {
		return claimResult{}, err
	}
	adopted, err := a.patch(ctx, vmi.Namespace, vmi.Name, data)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return claimResult{}, nil
		}
		return claimResult{}, fmt.Errorf("adopting instance %s: %w", vmi.Name, err)
	}
	klog.FromContext(ctx).Info("Adopted orphaned instance", "vmi", klog.KObj(vmi))
	a.event(vm, corev1.EventTypeNormal, "SuccessfulAdopt", "Adopted the orphaned virtual machine instance "+vmi.Name)
	return claimResult{vmi: adopted}, nil
}

// newInstance builds the VM's instance from its template: the VM's name and namespace, the
// template's metadata and spec (which carries the VM's firmware UUID since apiserver
// defaulting), the VM as controller, the controller finalizer (so that the VMI controller never
// needs a write to add it), the VM generation it reflects and the hash of what it was made from.
func newInstance(vm *kubevirtv1.VirtualMachine) *kubevirtv1.VirtualMachineInstance {
	vmi := &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			Name:            vm.Name,
			Namespace:       vm.Namespace,
			OwnerReferences: []metav1.OwnerReference{ownerref.Controller(kubevirtv1.SchemeGroupVersion.String(), vmKind, vm)},
			Finalizers:      []string{kubevirtv1.VirtualMachineControllerFinalizer},
		},
	}
	if t := vm.Spec.Template; t != nil {
		vmi.Labels = copyMap(t.ObjectMeta.Labels)
		vmi.Annotations = copyMap(t.ObjectMeta.Annotations)
		t.Spec.DeepCopyInto(&vmi.Spec)
	}
	if vmi.Annotations == nil {
		vmi.Annotations = map[string]string{}
	}
	vmi.Annotations[GenerationAnnotation] = strconv.FormatInt(vm.Generation, 10)
	vmi.Annotations[SpecHashAnnotation] = specHash(vm)
	if owned := ownedHotplugVolumes(&vmi.Spec); owned != "" {
		vmi.Annotations[HotplugVolumesAnnotation] = owned
	}
	return vmi
}

// execute performs the plan's action. It returns the instance as it is afterwards (the created
// one; the deleted one marked as being deleted) and, on failure, the error and its reason.
// paused creates the instance with startStrategy Paused.
func (a *instanceAPI) execute(ctx context.Context, vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance,
	act action, paused bool, now metav1.Time) (*kubevirtv1.VirtualMachineInstance, string, error) {
	logger := klog.FromContext(ctx)
	switch act {
	case actCreate:
		if vm.Spec.Template == nil {
			err := fmt.Errorf("the VM has no template")
			a.event(vm, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating virtual machine instance: "+err.Error())
			return nil, ReasonFailedCreate, err
		}
		instance := newInstance(vm)
		if a.expand != nil {
			if err := a.expand(ctx, vm, instance); err != nil {
				a.event(vm, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating virtual machine instance: "+err.Error())
				return nil, ReasonFailedCreate, err
			}
		}
		if paused {
			s := kubevirtv1.StartStrategyPaused
			instance.Spec.StartStrategy = &s
		}
		created, err := a.create(ctx, instance)
		if err != nil {
			a.event(vm, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating virtual machine instance: "+err.Error())
			return nil, ReasonFailedCreate, err
		}
		logger.Info("Started the VM by creating its instance", "vmi", klog.KObj(created))
		a.event(vm, corev1.EventTypeNormal, ReasonSuccessfulCreate,
			"Started the virtual machine by creating the new virtual machine instance "+created.Name)
		return created, "", nil
	case actDelete:
		if err := a.delete(ctx, vmi.Namespace, vmi.Name, vmi.UID); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, "", nil
			}
			a.event(vm, corev1.EventTypeWarning, ReasonFailedDelete,
				fmt.Sprintf("Error deleting virtual machine instance %s: %v", vmi.Name, err))
			return vmi, ReasonFailedDelete, err
		}
		logger.Info("Stopped the VM by deleting its instance", "vmi", klog.KObj(vmi), "phase", vmi.Status.Phase)
		a.event(vm, corev1.EventTypeNormal, ReasonSuccessfulDelete,
			"Stopped the virtual machine by deleting the virtual machine instance "+string(vmi.UID))
		deleted := vmi.DeepCopy()
		deleted.DeletionTimestamp = &now
		return deleted, "", nil
	}
	return vmi, "", nil
}

func copyMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
