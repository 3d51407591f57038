package hotplug

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/util/retry"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/subresource"
)

// Action names a volume subresource.
type Action string

// The volume subresources, on virtualmachines and virtualmachineinstances alike.
const (
	AddVolume    Action = "addvolume"
	RemoveVolume Action = "removevolume"
)

// Actions lists the volume subresources.
var Actions = []Action{AddVolume, RemoveVolume}

// NewOptions returns an empty options body of the action (its published kind).
func (a Action) NewOptions() runtime.Object {
	if a == AddVolume {
		return &kubevirtv1.AddVolumeOptions{}
	}
	return &kubevirtv1.RemoveVolumeOptions{}
}

// Store reads and writes one resource (the VM or the VMI store).
type Store interface {
	rest.Getter
	rest.Updater
}

// Executor applies volume requests to VMs and VMIs.
type Executor struct {
	VMs       Store
	Instances Store
}

// VMHandler serves the action on virtualmachines: the VM's template gets (or loses) the volume.
func (e *Executor) VMHandler(a Action) subresource.Handler {
	return e.handler(a, e.updateVM)
}

// VMIHandler serves the action on virtualmachineinstances: only that running instance changes.
func (e *Executor) VMIHandler(a Action) subresource.Handler {
	return e.handler(a, e.updateVMI)
}

type updateFunc func(ctx context.Context, name string, req Request, dryRun bool) error

func (e *Executor) handler(a Action, update updateFunc) subresource.Handler {
	return subresource.HandlerFunc(func(w http.ResponseWriter, r *http.Request, namespace, name string) {
		if !subresource.RequireMethod(w, r, http.MethodPut) {
			return
		}
		req, dryRunBody, err := decode(a, r)
		if err != nil {
			subresource.WriteError(w, err)
			return
		}
		dryRun, err := subresource.DryRun(r, dryRunBody)
		if err != nil {
			subresource.WriteError(w, err)
			return
		}
		ctx := genericapirequest.WithNamespace(r.Context(), namespace)
		if err := update(ctx, name, req, dryRun); err != nil {
			subresource.WriteError(w, err)
			return
		}
		subresource.WriteAccepted(w)
	})
}

// decode reads and checks the options body; a volume request has no defaults, so an empty body
// is refused as KubeVirt refuses it.
func decode(a Action, r *http.Request) (Request, []string, error) {
	if r.Body == nil || r.ContentLength == 0 {
		return Request{}, nil, apierrors.NewBadRequest("Request with no body, a new name is expected as the request body")
	}
	if a == AddVolume {
		opts := &kubevirtv1.AddVolumeOptions{}
		if err := subresource.DecodeBody(r, opts); err != nil {
			return Request{}, nil, err
		}
		if err := CheckAdd(opts); err != nil {
			return Request{}, nil, err
		}
		return Request{Add: opts}, opts.DryRun, nil
	}
	opts := &kubevirtv1.RemoveVolumeOptions{}
	if err := subresource.DecodeBody(r, opts); err != nil {
		return Request{}, nil, err
	}
	if err := CheckRemove(opts); err != nil {
		return Request{}, nil, err
	}
	return Request{Remove: opts}, opts.DryRun, nil
}

// refusal marks an error of the decision itself, so that the retry loop does not mistake a
// refusal for a write conflict.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }

// updateVM writes the request into the VM's template; a write conflict reads and decides again.
func (e *Executor) updateVM(ctx context.Context, name string, req Request, dryRun bool) error {
	return retryRefusals(func() error {
		obj, err := e.VMs.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return refusal{err}
		}
		vm, ok := obj.(*kubevirtv1.VirtualMachine)
		if !ok {
			return refusal{apierrors.NewInternalError(fmt.Errorf("VM store returned %T", obj))}
		}
		if vm.Spec.Template == nil {
			return refusal{apierrors.NewConflict(kubevirtv1.Resource("virtualmachine"), name, errors.New("the VM has no template"))}
		}
		if err := Verify(vm.Spec.Template.Spec.Volumes, req); err != nil {
			return refusal{apierrors.NewConflict(kubevirtv1.Resource("virtualmachine"), name, err)}
		}
		updated := vm.DeepCopy()
		Apply(&updated.Spec.Template.Spec, req)
		_, _, err = e.VMs.Update(ctx, name, rest.DefaultUpdatedObjectInfo(updated), rest.ValidateAllObjectFunc,
			rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{DryRun: subresource.DryRunOption(dryRun)})
		return err
	})
}

// updateVMI writes the request into a running instance's spec.
func (e *Executor) updateVMI(ctx context.Context, name string, req Request, dryRun bool) error {
	return retryRefusals(func() error {
		obj, err := e.Instances.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return refusal{err}
		}
		vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance)
		if !ok {
			return refusal{apierrors.NewInternalError(fmt.Errorf("instance store returned %T", obj))}
		}
		gr := kubevirtv1.Resource("virtualmachineinstance")
		if vmi.Status.Phase != kubevirtv1.Running || vmi.DeletionTimestamp != nil {
			return refusal{apierrors.NewConflict(gr, name, errors.New("VMI is not running"))}
		}
		if err := Verify(vmi.Spec.Volumes, req); err != nil {
			return refusal{apierrors.NewConflict(gr, name, err)}
		}
		updated := vmi.DeepCopy()
		Apply(&updated.Spec, req)
		_, _, err = e.Instances.Update(ctx, name, rest.DefaultUpdatedObjectInfo(updated), rest.ValidateAllObjectFunc,
			rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{DryRun: subresource.DryRunOption(dryRun)})
		return err
	})
}

func retryRefusals(fn func() error) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, fn)
	var r refusal
	if errors.As(err, &r) {
		return r.err
	}
	return err
}
