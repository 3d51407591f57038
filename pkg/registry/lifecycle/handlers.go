package lifecycle

import (
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/subresource"
)

// Action names a VirtualMachine action; it is also its subresource name.
type Action string

// The VirtualMachine actions.
const (
	Start   Action = "start"
	Stop    Action = "stop"
	Restart Action = "restart"
	Migrate Action = "migrate"
)

// Actions lists every VirtualMachine action.
var Actions = []Action{Start, Stop, Restart, Migrate}

// NewOptions returns an empty options body of the action (its published kind).
func (a Action) NewOptions() runtime.Object {
	switch a {
	case Start:
		return &kubevirtv1.StartOptions{}
	case Stop:
		return &kubevirtv1.StopOptions{}
	case Restart:
		return &kubevirtv1.RestartOptions{}
	default:
		return &kubevirtv1.MigrateOptions{}
	}
}

// Handler serves the action: PUT with an optional JSON options body; 202 on success.
func (e *Executor) Handler(a Action) subresource.Handler {
	return subresource.HandlerFunc(func(w http.ResponseWriter, r *http.Request, namespace, name string) {
		if !subresource.RequireMethod(w, r, http.MethodPut) {
			return
		}
		decide, dryRunBody, err := decoder(a, r)
		if err != nil {
			subresource.WriteError(w, err)
			return
		}
		dryRun, err := subresource.DryRun(r, dryRunBody)
		if err != nil {
			subresource.WriteError(w, err)
			return
		}
		if err := e.Run(r.Context(), namespace, name, dryRun, decide); err != nil {
			subresource.WriteError(w, err)
			return
		}
		subresource.WriteAccepted(w)
	})
}

// decoder reads the action's options from the body and binds them to its decision.
func decoder(a Action, r *http.Request) (decideFunc, []string, error) {
	switch a {
	case Start:
		opts := &kubevirtv1.StartOptions{}
		if err := subresource.DecodeBody(r, opts); err != nil {
			return nil, nil, err
		}
		return func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
			return PlanStart(vm, vmi, opts)
		}, opts.DryRun, nil
	case Stop:
		opts := &kubevirtv1.StopOptions{}
		if err := subresource.DecodeBody(r, opts); err != nil {
			return nil, nil, err
		}
		return func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
			return PlanStop(vm, vmi, opts)
		}, opts.DryRun, nil
	case Restart:
		opts := &kubevirtv1.RestartOptions{}
		if err := subresource.DecodeBody(r, opts); err != nil {
			return nil, nil, err
		}
		return func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
			return PlanRestart(vm, vmi, opts)
		}, opts.DryRun, nil
	default:
		opts := &kubevirtv1.MigrateOptions{}
		if err := subresource.DecodeBody(r, opts); err != nil {
			return nil, nil, err
		}
		return func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
			return PlanMigrate(vm, vmi, opts)
		}, opts.DryRun, nil
	}
}
