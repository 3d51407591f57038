package vmiproxy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// Check decides whether the instance's state allows the action, with KubeVirt's messages.
func Check(a streams.Action, vmi *kubevirtv1.VirtualMachineInstance) error {
	gr := kubevirtv1.Resource("virtualmachineinstances")
	if vmi.Status.Phase != kubevirtv1.Running || vmi.Status.NodeName == "" {
		phase := string(vmi.Status.Phase)
		if phase == "" {
			phase = "Pending"
		}
		return apierrors.NewConflict(gr, vmi.Name, fmt.Errorf("VMI is not running (phase %s)", phase))
	}
	paused := pausedCondition(vmi)
	switch a {
	case streams.ActionPause:
		if paused {
			return apierrors.NewConflict(gr, vmi.Name, fmt.Errorf("VMI is already paused"))
		}
	case streams.ActionUnpause:
		if !paused {
			return apierrors.NewConflict(gr, vmi.Name, fmt.Errorf("VMI is not paused"))
		}
	case streams.ActionSoftReboot, streams.ActionFreeze, streams.ActionUnfreeze:
		// The guest agent does not answer while the vCPUs are paused.
		if paused {
			return apierrors.NewConflict(gr, vmi.Name, fmt.Errorf("VMI is paused"))
		}
	}
	return nil
}

func pausedCondition(vmi *kubevirtv1.VirtualMachineInstance) bool {
	for _, c := range vmi.Status.Conditions {
		if c.Type == kubevirtv1.VirtualMachineInstancePaused && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
