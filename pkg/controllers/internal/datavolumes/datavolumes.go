// Package datavolumes holds what the VM and VMI controllers both read of a DataVolume.
package datavolumes

import (
	corev1 "k8s.io/api/core/v1"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// Usable says whether a new launcher pod may use a DataVolume in phase p: it Succeeded, or it
// waits for the pod as its first consumer (WaitForFirstConsumer, PendingPopulation).
func Usable(p cdiv1beta1.DataVolumePhase) bool {
	return p == cdiv1beta1.Succeeded || p == cdiv1beta1.WaitForFirstConsumer || p == cdiv1beta1.PendingPopulation
}

// Condition returns the DataVolume's condition of type t, or nil.
func Condition(dv *cdiv1beta1.DataVolume, t cdiv1beta1.DataVolumeConditionType) *cdiv1beta1.DataVolumeCondition {
	for i := range dv.Status.Conditions {
		if dv.Status.Conditions[i].Type == t {
			return &dv.Status.Conditions[i]
		}
	}
	return nil
}

// ReadyStatus is the status of the DataVolume's Ready condition, Unknown when it has none.
func ReadyStatus(dv *cdiv1beta1.DataVolume) corev1.ConditionStatus {
	if c := Condition(dv, cdiv1beta1.DataVolumeReady); c != nil {
		return c.Status
	}
	return corev1.ConditionUnknown
}
