package vmis

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestFacts(t *testing.T) {
	now := metav1.Now()
	ready := []kubevirtv1.VirtualMachineInstanceCondition{{Type: kubevirtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue}}
	tests := []struct {
		name                            string
		phase                           kubevirtv1.VirtualMachineInstancePhase
		deleting                        bool
		conds                           []kubevirtv1.VirtualMachineInstanceCondition
		ran                             bool
		final, terminating, active, rdy bool
		hasRun                          bool
	}{
		{name: "new", active: true},
		{name: "scheduled", phase: kubevirtv1.Scheduled, active: true},
		{name: "running ready", phase: kubevirtv1.Running, conds: ready, active: true, rdy: true, hasRun: true},
		{name: "running not ready", phase: kubevirtv1.Running, active: true, hasRun: true},
		{name: "running ready but deleting", phase: kubevirtv1.Running, conds: ready, deleting: true, terminating: true, hasRun: true},
		{name: "failed early", phase: kubevirtv1.Failed, final: true},
		{name: "succeeded after running", phase: kubevirtv1.Succeeded, ran: true, final: true, hasRun: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vmi := &kubevirtv1.VirtualMachineInstance{}
			vmi.Status.Phase = tc.phase
			vmi.Status.Conditions = tc.conds
			if tc.deleting {
				vmi.DeletionTimestamp = &now
			}
			if tc.ran {
				vmi.Status.PhaseTransitionTimestamps = []kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{{Phase: kubevirtv1.Running}}
			}
			got := []bool{IsFinal(vmi), IsTerminating(vmi), IsActive(vmi), IsReady(vmi), HasRun(vmi)}
			want := []bool{tc.final, tc.terminating, tc.active, tc.rdy, tc.hasRun}
			for i, name := range []string{"IsFinal", "IsTerminating", "IsActive", "IsReady", "HasRun"} {
				if got[i] != want[i] {
					t.Errorf("%s = %v, want %v", name, got[i], want[i])
				}
			}
		})
	}
}
