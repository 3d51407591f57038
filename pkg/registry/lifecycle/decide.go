// Package lifecycle implements the VirtualMachine actions start, stop, restart and migrate. The
// decisions are pure functions of the VM, its instance and the request options (decide.go); the
// executor applies a decision to the stores with optimistic concurrency (executor.go); the
// handlers serve it over HTTP (handlers.go), both under kubevirt.io and subresources.kubevirt.io.
//
// The apiserver only records intent: it changes spec.runStrategy (or the legacy spec.running)
// or appends status.stateChangeRequests, which the VM controller consumes. Only force stops and
// force restarts act directly, by deleting the instance or its launcher pods.
package lifecycle

import (
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// StopGracePeriodAnnotation on an instance carries the grace period of a stop request that
// overrode the instance's own (its spec is immutable). The node agent shuts the guest down
// within min(this, spec.terminationGracePeriodSeconds).
const StopGracePeriodAnnotation = "kubevirt.io/stop-grace-period-seconds"

// KubeVirt's messages, kept so that scripts written against KubeVirt see the same text.
const (
	msgAlreadyRunning = "VM is already running"
	msgNotRunning     = "VM is not running"
	msgUnderway       = "unable to complete request: stop/start already underway"
)

// Plan is what one action changes. The zero Plan changes nothing.
type Plan struct {
	// SetRunning, when set, rewrites the run strategy: Always/Halted in spec.runStrategy, or
	// spec.running for VMs that use the legacy field. A plan that sets it to running writes its
	// requests first: the VM controller must not see Always before a paused start is pending.
	SetRunning *bool
	// Requests, when WriteRequests is set, is the complete new status.stateChangeRequests.
	Requests      []kubevirtv1.VirtualMachineStateChangeRequest
	WriteRequests bool
	// DeleteInstance deletes the instance (UID InstanceUID) with this grace period in seconds.
	DeleteInstance *int64
	// DeletePods force-deletes the launcher pods of InstanceUID (grace period 0).
	DeletePods bool
	// InstanceUID is the instance the plan acts on, if any.
	InstanceUID types.UID
	// Migrate creates a VirtualMachineInstanceMigration of the instance, restricted to nodes
	// matching MigrateNodeSelector.
	Migrate             bool
	MigrateNodeSelector map[string]string
}

// needsPods reports whether applying the plan needs the Kubernetes API.
func (p Plan) needsPods() bool { return p.DeletePods }

// RunStrategy returns the VM's effective run strategy and whether it comes from the legacy
// spec.running field (absent both: Halted, as in KubeVirt).
func RunStrategy(vm *kubevirtv1.VirtualMachine) (kubevirtv1.VirtualMachineRunStrategy, bool, error) {
	switch {
	case vm.Spec.Running != nil && vm.Spec.RunStrategy != nil:
		return "", false, apierrors.NewConflict(kubevirtv1.Resource("virtualmachines"), vm.Name,
			fmt.Errorf("spec.running and spec.runStrategy are both set; remove one"))
	case vm.Spec.RunStrategy != nil:
		return *vm.Spec.RunStrategy, false, nil
	case vm.Spec.Running != nil && *vm.Spec.Running:
		return kubevirtv1.RunStrategyAlways, true, nil
	default:
		return kubevirtv1.RunStrategyHalted, true, nil
	}
}

// isFinal: the instance's guest is gone for good (Succeeded or Failed).
func isFinal(vmi *kubevirtv1.VirtualMachineInstance) bool {
	return vmi.Status.Phase == kubevirtv1.Succeeded || vmi.Status.Phase == kubevirtv1.Failed
}

// alreadyRunning: an instance exists that a start must not duplicate. An instance in phase
// Unknown (its node is unreachable) does not count, as in KubeVirt.
func alreadyRunning(vmi *kubevirtv1.VirtualMachineInstance) bool {
	return vmi != nil && !isFinal(vmi) && vmi.Status.Phase != kubevirtv1.Unknown
}

// active: an instance exists whose guest may still run (also while it terminates).
func active(vmi *kubevirtv1.VirtualMachineInstance) bool {
	return vmi != nil && !isFinal(vmi)
}

func conflict(vm *kubevirtv1.VirtualMachine, format string, args ...any) error {
	return apierrors.NewConflict(kubevirtv1.Resource("virtualmachines"), vm.Name, fmt.Errorf(format, args...))
}

func stopRequest(vmi *kubevirtv1.VirtualMachineInstance) kubevirtv1.VirtualMachineStateChangeRequest {
	uid := vmi.UID
	return kubevirtv1.VirtualMachineStateChangeRequest{Action: kubevirtv1.StopRequest, UID: &uid}
}

// startRequest asks the VM controller for an instance; a paused one gets startStrategy Paused
// (KubeVirt's request data "paused": "true").
func startRequest(paused bool) kubevirtv1.VirtualMachineStateChangeRequest {
	r := kubevirtv1.VirtualMachineStateChangeRequest{Action: kubevirtv1.StartRequest}
	if paused {
		r.Data = map[string]string{kubevirtv1.StartRequestDataPausedKey: kubevirtv1.StartRequestDataPausedTrue}
	}
	return r
}

// withRequests merges new requests into the pending ones the way KubeVirt does: they are
// appended when nothing is pending; a lone Stop replaces whatever is pending; anything else
// while requests are pending is a conflict.
func withRequests(vm *kubevirtv1.VirtualMachine, plan Plan, reqs ...kubevirtv1.VirtualMachineStateChangeRequest) (Plan, error) {
	pending := vm.Status.StateChangeRequests
	switch {
	case len(pending) == 0:
		plan.Requests = reqs
	case len(reqs) == 1 && reqs[0].Action == kubevirtv1.StopRequest:
		plan.Requests = reqs
	default:
		return Plan{}, conflict(vm, msgUnderway)
	}
	plan.WriteRequests = true
	return plan, nil
}

func ptrBool(b bool) *bool { return &b }

// PlanStart decides a start request.
func PlanStart(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance, opts *kubevirtv1.StartOptions) (Plan, error) {
	paused := opts.Paused
	strategy, _, err := RunStrategy(vm)
	if err != nil {
		return Plan{}, err
	}
	if alreadyRunning(vmi) {
		return Plan{}, conflict(vm, msgAlreadyRunning)
	}
	switch strategy {
	case kubevirtv1.RunStrategyHalted:
		if paused {
			// As KubeVirt: the VM becomes Always, and the pending paused start makes its
			// instance start paused.
			return withRequests(vm, Plan{SetRunning: ptrBool(true)}, startRequest(true))
		}
		if len(vm.Status.StateChangeRequests) > 0 {
			// A paused start whose run strategy write failed is still pending: a plain start
			// drops it first, or the VM would start paused.
			return Plan{SetRunning: ptrBool(true), WriteRequests: true}, nil
		}
		return Plan{SetRunning: ptrBool(true)}, nil
	case kubevirtv1.RunStrategyManual:
		if vmi != nil && isFinal(vmi) {
			// The finished instance must go before a new one can start (fencing).
			return withRequests(vm, Plan{InstanceUID: vmi.UID}, stopRequest(vmi), startRequest(paused))
		}
		return withRequests(vm, Plan{}, startRequest(paused))
	case kubevirtv1.RunStrategyRerunOnFailure:
		if vmi != nil && vmi.Status.Phase == kubevirtv1.Failed {
			return Plan{}, conflict(vm, "%s does not support starting VM from failed state", strategy)
		}
		if vmi != nil && vmi.Status.Phase == kubevirtv1.Succeeded {
			return withRequests(vm, Plan{InstanceUID: vmi.UID}, stopRequest(vmi), startRequest(paused))
		}
		return withRequests(vm, Plan{}, startRequest(paused))
	case kubevirtv1.RunStrategyOnce:
		if vmi == nil {
			return withRequests(vm, Plan{}, startRequest(paused))
		}
		return Plan{}, conflict(vm, "%s does not support manual start requests", strategy)
	default: // Always, WaitAsReceiver
		return Plan{}, conflict(vm, "%s does not support manual start requests", strategy)
	}
}

// PlanStop decides a stop request. A grace period makes the apiserver delete the instance
// itself with that grace period; a grace period of 0 also force-deletes its launcher pods.
func PlanStop(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance, opts *kubevirtv1.StopOptions) (Plan, error) {
	grace := opts.GracePeriod
	if grace != nil && *grace < 0 {
		return Plan{}, apierrors.NewBadRequest("gracePeriod has to be greater or equal to 0")
	}
	strategy, _, err := RunStrategy(vm)
	if err != nil {
		return Plan{}, err
	}
	var plan Plan
	if active(vmi) && grace != nil {
		g := *grace
		plan.InstanceUID = vmi.UID
		plan.DeleteInstance = &g
		plan.DeletePods = g == 0
	}
	switch strategy {
	case kubevirtv1.RunStrategyHalted:
		if !active(vmi) {
			return Plan{}, conflict(vm, msgNotRunning)
		}
		// Already stopping: only a shorter grace period changes anything.
		if grace == nil || *grace >= currentGracePeriod(vmi) {
			return Plan{}, conflict(vm, "%s only supports manual stop requests with a shorter graceperiod", strategy)
		}
		return withRequests(vm, plan, stopRequest(vmi))
	case kubevirtv1.RunStrategyManual:
		if !active(vmi) {
			return Plan{}, conflict(vm, msgNotRunning)
		}
		return withRequests(vm, plan, stopRequest(vmi))
	case kubevirtv1.RunStrategyAlways, kubevirtv1.RunStrategyRerunOnFailure, kubevirtv1.RunStrategyOnce:
		plan.SetRunning = ptrBool(false)
		return plan, nil
	default: // WaitAsReceiver
		return Plan{}, conflict(vm, "%s does not support manual stop requests", strategy)
	}
}

// currentGracePeriod is the grace period an instance is being (or would be) stopped with.
func currentGracePeriod(vmi *kubevirtv1.VirtualMachineInstance) int64 {
	if v, ok := vmi.Annotations[StopGracePeriodAnnotation]; ok {
		if g, err := strconv.ParseInt(v, 10, 64); err == nil && g >= 0 {
			return g
		}
	}
	if g := vmi.Spec.TerminationGracePeriodSeconds; g != nil {
		return *g
	}
	return kubevirtv1.DefaultGracePeriodSeconds
}

// PlanRestart decides a restart request: stop the current instance and start a new one, for
// every run strategy but Halted (whose instance, if any, is being stopped). A grace period of 0
// force-deletes the launcher pods so that the restart does not wait for the guest.
func PlanRestart(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance, opts *kubevirtv1.RestartOptions) (Plan, error) {
	if g := opts.GracePeriodSeconds; g != nil {
		if *g < 0 {
			return Plan{}, apierrors.NewBadRequest("gracePeriod has to be greater or equal to 0")
		}
		if *g > 0 {
			return Plan{}, apierrors.NewBadRequest("For force restart, only gracePeriod=0 is supported for now")
		}
	}
	strategy, _, err := RunStrategy(vm)
	if err != nil {
		return Plan{}, err
	}
	if strategy == kubevirtv1.RunStrategyHalted {
		return Plan{}, conflict(vm, "RunStrategy %s does not support manual restart requests", strategy)
	}
	if vmi == nil {
		return Plan{}, conflict(vm, msgNotRunning)
	}
	plan := Plan{InstanceUID: vmi.UID, DeletePods: opts.GracePeriodSeconds != nil}
	return withRequests(vm, plan, stopRequest(vmi), startRequest(false))
}

// PlanMigrate decides a migrate request: only a running instance can move.
func PlanMigrate(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance, opts *kubevirtv1.MigrateOptions) (Plan, error) {
	if vmi == nil || vmi.Status.Phase != kubevirtv1.Running {
		return Plan{}, conflict(vm, msgNotRunning)
	}
	return Plan{Migrate: true, InstanceUID: vmi.UID, MigrateNodeSelector: opts.AddedNodeSelector}, nil
}
