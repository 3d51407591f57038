package vm

import (
	"time"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/vmis"
)

// action is what the VM controller does to the instance in one sync: at most one write.
type action int

const (
	// actNone leaves the instance alone.
	actNone action = iota
	// actCreate creates the instance from the template.
	actCreate
	// actDelete deletes the existing instance.
	actDelete
)

func (a action) String() string {
	return [...]string{"none", "create", "delete"}[a]
}

// plan is the decision of one sync.
type plan struct {
	action action
	// requests are status.stateChangeRequests once the action succeeded: requests acted on (or
	// found stale) are gone, requests still waiting (fencing) stay, and a RerunOnFailure restart
	// adds a Start.
	requests []kubevirtv1.VirtualMachineStateChangeRequest
	// requeueAfter asks for another sync when a start back-off ends.
	requeueAfter time.Duration
	// startPaused creates the instance with startStrategy Paused (a start request with
	// KubeVirt's "paused" data: virtctl start --paused).
	startPaused bool
}

// pausedStart tells whether a start request asks for a paused start.
func pausedStart(req kubevirtv1.VirtualMachineStateChangeRequest) bool {
	return req.Data[kubevirtv1.StartRequestDataPausedKey] == kubevirtv1.StartRequestDataPausedTrue
}

// RunStrategy is the effective run strategy: spec.runStrategy, else the legacy spec.running
// (true is Always, false or unset is Halted). The apiserver refuses setting both.
func RunStrategy(vm *kubevirtv1.VirtualMachine) kubevirtv1.VirtualMachineRunStrategy {
	if vm.Spec.RunStrategy != nil && *vm.Spec.RunStrategy != kubevirtv1.RunStrategyUnknown {
		return *vm.Spec.RunStrategy
	}
	if vm.Spec.Running != nil && *vm.Spec.Running {
		return kubevirtv1.RunStrategyAlways
	}
	return kubevirtv1.RunStrategyHalted
}

// backsOff reports whether restarts of the strategy wait for the start failure back-off.
func backsOff(s kubevirtv1.VirtualMachineRunStrategy) bool {
	return s == kubevirtv1.RunStrategyAlways || s == kubevirtv1.RunStrategyRerunOnFailure
}

// decide is the run strategy state machine. vmi is the VM's own instance or nil; startFailure
// is the (already updated) start failure record. Fencing: no instance is created while one
// exists, also while it terminates; a final instance is deleted first, then re-created by a
// later sync once it is gone.
func decide(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance,
	startFailure *kubevirtv1.VirtualMachineStartFailure, now time.Time) plan {
	strategy := RunStrategy(vm)
	p := plan{action: actNone}
	if vm.DeletionTimestamp != nil {
		// The garbage collector removes (or orphans) the instance; creating one now would race it.
		p.requests = vm.Status.StateChangeRequests
		return p
	}

	backoff := func() time.Duration {
		if !backsOff(strategy) || startFailure == nil || startFailure.RetryAfterTimestamp == nil {
			return 0
		}
		if left := startFailure.RetryAfterTimestamp.Sub(now); left > 0 {
			return left
		}
		return 0
	}

	// State change requests (start/stop/restart subresources) come first, in order.
	requests := vm.Status.StateChangeRequests
	for len(requests) > 0 {
		req := requests[0]
		switch req.Action {
		case kubevirtv1.StopRequest:
			if vmi == nil || vmis.IsTerminating(vmi) || (req.UID != nil && *req.UID != vmi.UID) {
				// Already stopped, already stopping, or aimed at an earlier instance.
				requests = requests[1:]
				continue
			}
			p.action, p.requests = actDelete, requests[1:]
			return p
		case kubevirtv1.StartRequest:
			switch {
			case strategy == kubevirtv1.RunStrategyHalted && pausedStart(req):
				// The start subresource writes a paused start before it turns Halted into
				// Always: keep it for then.
				p.requests = requests
				return p
			case strategy == kubevirtv1.RunStrategyHalted:
				// Halted keeps no instance; the start subresource turns Halted into Always instead.
				requests = requests[1:]
				continue
			case vmi == nil:
				if left := backoff(); left > 0 {
					p.requests, p.requeueAfter = requests, left
					return p
				}
				p.action, p.requests, p.startPaused = actCreate, requests[1:], pausedStart(req)
				return p
			case vmis.IsTerminating(vmi):
				// Fencing: wait until the old instance is gone.
				p.requests = requests
				return p
			case vmis.IsFinal(vmi):
				// The finished instance makes room for the new one; the request stays.
				p.action, p.requests = actDelete, requests
				return p
			default:
				// Already running.
				requests = requests[1:]
				continue
			}
		default:
			// Validation admits only Start and Stop; drop anything else rather than block.
			requests = requests[1:]
		}
	}
	p.requests = requests

	switch strategy {
	case kubevirtv1.RunStrategyHalted:
		if vmi != nil && !vmis.IsTerminating(vmi) {
			p.action = actDelete
		}
	case kubevirtv1.RunStrategyAlways:
		switch {
		case vmi == nil:
			if left := backoff(); left > 0 {
				p.requeueAfter = left
			} else {
				p.action = actCreate
			}
		case vmis.IsFinal(vmi) && !vmis.IsTerminating(vmi):
			p.action = actDelete
		}
	case kubevirtv1.RunStrategyRerunOnFailure:
		switch {
		case vmi == nil:
			// Start when the VM just became RerunOnFailure (or was created so); an instance that
			// succeeded and was removed stays stopped.
			if vm.Status.RunStrategy != strategy {
				if left := backoff(); left > 0 {
					p.requeueAfter = left
				} else {
					p.action = actCreate
				}
			}
		case vmis.IsTerminating(vmi):
		case vmi.Status.Phase == kubevirtv1.Failed:
			// Restart: delete now, start through a Start request once the instance is gone.
			p.action = actDelete
			p.requests = append(append([]kubevirtv1.VirtualMachineStateChangeRequest{}, p.requests...),
				kubevirtv1.VirtualMachineStateChangeRequest{Action: kubevirtv1.StartRequest})
		case vmi.Status.Phase == kubevirtv1.Succeeded:
			p.action = actDelete
		}
	case kubevirtv1.RunStrategyOnce:
		if vmi == nil {
			p.action = actCreate
		}
	case kubevirtv1.RunStrategyManual:
		// Only requests act.
	}
	return p
}
