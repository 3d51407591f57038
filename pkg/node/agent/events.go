package agent

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/domains"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// Event reasons the node agent records on VMIs, KubeVirt's virt-handler's: what `kubectl
// describe vmi` shows of the guest's life on its node, and why a start does not go on.
const (
	// EventCreated: the domain is defined.
	EventCreated = "Created"
	// EventStarted: the domain started.
	EventStarted = "Started"
	// EventShuttingDown: the guest was asked to shut down (ACPI).
	EventShuttingDown = "ShuttingDown"
	// EventStopped: the guest stopped for good (Normal: shut down; Warning: failed).
	EventStopped = "Stopped"
	// EventSyncFailed: a sync of the VMI failed; the message is the error. It is retried.
	EventSyncFailed = "SyncFailed"
)

// event records an event on vmi, when the agent has a recorder.
func (a *Agent) event(vmi *kubevirtv1.VirtualMachineInstance, eventType, reason, message string) {
	if a.cfg.Event != nil && vmi != nil {
		a.cfg.Event(vmi, eventType, reason, message)
	}
}

// syncFailed records the error of a failed sync on the VMI of key. Conflicts (the VMI changed
// meanwhile) are the retry's business, not the user's.
func (a *Agent) syncFailed(key string, err error) {
	if apierrors.IsConflict(err) {
		return
	}
	vmi, gerr := a.vmiOfKey(key)
	if gerr != nil || vmi == nil {
		return
	}
	a.event(vmi, corev1.EventTypeWarning, EventSyncFailed, err.Error())
}

// stoppedEvent records why the guest stopped for good.
func (a *Agent) stoppedEvent(vmi *kubevirtv1.VirtualMachineInstance, phase kubevirtv1.VirtualMachineInstancePhase, info virt.DomainInfo, rec domains.Record, gone string) {
	if phase == kubevirtv1.Succeeded {
		a.event(vmi, corev1.EventTypeNormal, EventStopped, "The VirtualMachineInstance was shut down.")
		return
	}
	msg := fmt.Sprintf("The VirtualMachineInstance stopped (%s, %s).", info.State, info.Reason)
	switch {
	case rec.Killed:
		msg = "The launcher was stopped by the kubelet although neither the instance nor its pod was deleted (a failed liveness probe): the guest was shut down."
	case info.State == virt.StateCrashed || info.Reason == virt.ReasonCrashed:
		msg = "The VirtualMachineInstance crashed."
	case gone != "":
		msg = "The VirtualMachineInstance is gone: " + gone + "."
	}
	a.event(vmi, corev1.EventTypeWarning, EventStopped, msg)
}

// vmiOfKey is the VMI of a namespace/name key (this node's or migrating here), nil when gone.
func (a *Agent) vmiOfKey(key string) (*kubevirtv1.VirtualMachineInstance, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, err
	}
	vmi, err := a.getVMI(ns, name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return vmi, err
}
