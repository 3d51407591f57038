// Package vmis holds small, pure facts about VirtualMachineInstances that several controllers
// need: final phases, conditions, whether the guest ever ran.
package vmis

import (
	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/conditions"
)

// IsFinal reports whether the instance is done for good (Succeeded or Failed).
func IsFinal(vmi *kubevirtv1.VirtualMachineInstance) bool {
	return vmi.Status.Phase == kubevirtv1.Succeeded || vmi.Status.Phase == kubevirtv1.Failed
}

// IsTerminating reports whether the instance is being deleted.
func IsTerminating(vmi *kubevirtv1.VirtualMachineInstance) bool {
	return vmi.DeletionTimestamp != nil
}

// IsActive reports whether the instance exists for a purpose: neither final nor being deleted.
func IsActive(vmi *kubevirtv1.VirtualMachineInstance) bool {
	return !IsFinal(vmi) && !IsTerminating(vmi)
}

// HasCondition reports whether the condition t has status s.
func HasCondition(vmi *kubevirtv1.VirtualMachineInstance, t kubevirtv1.VirtualMachineInstanceConditionType, s corev1.ConditionStatus) bool {
	c := conditions.VMI(&vmi.Status, t)
	return c != nil && c.Status == s
}

// IsReady reports whether the guest runs and is ready.
func IsReady(vmi *kubevirtv1.VirtualMachineInstance) bool {
	return vmi.Status.Phase == kubevirtv1.Running && !IsTerminating(vmi) &&
		HasCondition(vmi, kubevirtv1.VirtualMachineInstanceReady, corev1.ConditionTrue)
}

// HasRun reports whether the guest ever reached Running.
func HasRun(vmi *kubevirtv1.VirtualMachineInstance) bool {
	if vmi.Status.Phase == kubevirtv1.Running {
		return true
	}
	for _, ts := range vmi.Status.PhaseTransitionTimestamps {
		if ts.Phase == kubevirtv1.Running {
			return true
		}
	}
	return false
}
