package vm

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestPrintableStatus(t *testing.T) {
	const always = kubevirtv1.RunStrategyAlways
	podScheduled := kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled)
	tests := []struct {
		name         string
		vm           *kubevirtv1.VirtualMachine
		vmi          *kubevirtv1.VirtualMachineInstance
		startFailure *kubevirtv1.VirtualMachineStartFailure
		strategy     kubevirtv1.VirtualMachineRunStrategy
		want         kubevirtv1.VirtualMachinePrintableStatus
	}{
		{name: "no instance", vm: newVM(), want: kubevirtv1.VirtualMachineStatusStopped},
		{name: "VM deleted", vm: newVM(vmDeleting()), vmi: newVMI(kubevirtv1.Running), want: kubevirtv1.VirtualMachineStatusTerminating},
		{name: "new instance", vm: newVM(), vmi: newVMI(""), want: kubevirtv1.VirtualMachineStatusStarting},
		{name: "pending", vm: newVM(), vmi: newVMI(kubevirtv1.Pending), want: kubevirtv1.VirtualMachineStatusStarting},
		{name: "scheduling", vm: newVM(), vmi: newVMI(kubevirtv1.Scheduling), want: kubevirtv1.VirtualMachineStatusStarting},
		{name: "scheduled", vm: newVM(), vmi: newVMI(kubevirtv1.Scheduled), want: kubevirtv1.VirtualMachineStatusStarting},
		{name: "unschedulable", vm: newVM(), vmi: newVMI(kubevirtv1.Scheduling, vmiCondition(podScheduled, "False", "Unschedulable")),
			want: kubevirtv1.VirtualMachineStatusUnschedulable},
		{name: "scheduling, other reason", vm: newVM(), vmi: newVMI(kubevirtv1.Scheduling, vmiCondition(podScheduled, "False", "SchedulerError")),
			want: kubevirtv1.VirtualMachineStatusStarting},
		{name: "running", vm: newVM(), vmi: newVMI(kubevirtv1.Running), want: kubevirtv1.VirtualMachineStatusRunning},
		{name: "paused", vm: newVM(), vmi: newVMI(kubevirtv1.Running, vmiCondition(kubevirtv1.VirtualMachineInstancePaused, "True", "PausedByUser")),
			want: kubevirtv1.VirtualMachineStatusPaused},
		{name: "migrating", vm: newVM(), vmi: newVMI(kubevirtv1.Running, func(v *kubevirtv1.VirtualMachineInstance) {
			v.Status.MigrationState = &kubevirtv1.VirtualMachineInstanceMigrationState{}
		}), want: kubevirtv1.VirtualMachineStatusMigrating},
		{name: "migration completed", vm: newVM(), vmi: newVMI(kubevirtv1.Running, func(v *kubevirtv1.VirtualMachineInstance) {
			v.Status.MigrationState = &kubevirtv1.VirtualMachineInstanceMigrationState{Completed: true}
		}), want: kubevirtv1.VirtualMachineStatusRunning},
		{name: "stopping", vm: newVM(), vmi: newVMI(kubevirtv1.Running, vmiDeleting()), want: kubevirtv1.VirtualMachineStatusStopping},
		{name: "succeeded", vm: newVM(), vmi: newVMI(kubevirtv1.Succeeded), want: kubevirtv1.VirtualMachineStatusStopped},
		{name: "failed", vm: newVM(), vmi: newVMI(kubevirtv1.Failed), want: kubevirtv1.VirtualMachineStatusStopped},
		{name: "unknown", vm: newVM(), vmi: newVMI(kubevirtv1.Unknown), want: kubevirtv1.VirtualMachineStatusUnknown},
		{name: "crash loop, no instance", vm: newVM(), strategy: always, startFailure: failure(2, "x", time.Minute),
			want: kubevirtv1.VirtualMachineStatusCrashLoopBackOff},
		{name: "crash loop, failed instance", vm: newVM(), vmi: newVMI(kubevirtv1.Failed), strategy: always,
			startFailure: failure(1, "vmi-1", time.Minute), want: kubevirtv1.VirtualMachineStatusCrashLoopBackOff},
		{name: "back-off over", vm: newVM(), strategy: always, startFailure: failure(2, "x", -time.Second),
			want: kubevirtv1.VirtualMachineStatusStopped},
		{name: "no crash loop for Manual", vm: newVM(), strategy: kubevirtv1.RunStrategyManual, startFailure: failure(2, "x", time.Minute),
			want: kubevirtv1.VirtualMachineStatusStopped},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := printableStatus(tc.vm, tc.vmi, tc.startFailure, tc.strategy, testNow); got != tc.want {
				t.Errorf("printableStatus = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestStartBackoff(t *testing.T) {
	want := []time.Duration{10, 10, 40, 90, 160, 250, 300, 300}
	for count, w := range want {
		if got := startBackoff(int32(count)); got != w*time.Second {
			t.Errorf("startBackoff(%d) = %s, want %s", count, got, w*time.Second)
		}
	}
	if got := startBackoff(1 << 30); got != maxStartBackoff {
		t.Errorf("startBackoff(huge) = %s, want the cap", got)
	}
}

func TestNextStartFailure(t *testing.T) {
	const always = kubevirtv1.RunStrategyAlways
	tests := []struct {
		name     string
		old      *kubevirtv1.VirtualMachineStartFailure
		strategy kubevirtv1.VirtualMachineRunStrategy
		vmi      *kubevirtv1.VirtualMachineInstance
		want     *kubevirtv1.VirtualMachineStartFailure
	}{
		{name: "first failure", strategy: always, vmi: newVMI(kubevirtv1.Failed), want: failure(1, "vmi-1", 10*time.Second)},
		{name: "second failure", strategy: always, old: failure(1, "vmi-0", 0), vmi: newVMI(kubevirtv1.Failed), want: failure(2, "vmi-1", 40*time.Second)},
		{name: "same instance counted once", strategy: always, old: failure(1, "vmi-1", 5*time.Second), vmi: newVMI(kubevirtv1.Failed),
			want: failure(1, "vmi-1", 5*time.Second)},
		{name: "an instance that ran clears", strategy: always, old: failure(3, "vmi-0", 0), vmi: newVMI(kubevirtv1.Running), want: nil},
		{name: "an instance that ran and failed clears", strategy: always, old: failure(3, "vmi-0", 0), vmi: newVMI(kubevirtv1.Failed, vmiRan()), want: nil},
		{name: "a starting instance keeps the record", strategy: always, old: failure(3, "vmi-0", 0), vmi: newVMI(kubevirtv1.Scheduling),
			want: failure(3, "vmi-0", 0)},
		{name: "no instance keeps the record", strategy: always, old: failure(3, "vmi-0", 0), want: failure(3, "vmi-0", 0)},
		{name: "Once records too", strategy: kubevirtv1.RunStrategyOnce, vmi: newVMI(kubevirtv1.Failed), want: failure(1, "vmi-1", 10*time.Second)},
		{name: "Manual keeps no record", strategy: kubevirtv1.RunStrategyManual, old: failure(3, "vmi-0", 0), vmi: newVMI(kubevirtv1.Failed), want: nil},
		{name: "Halted keeps no record", strategy: kubevirtv1.RunStrategyHalted, old: failure(3, "vmi-0", 0), want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := nextStartFailure(tc.old, tc.strategy, tc.vmi, testNow)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("start failure (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeStatus(t *testing.T) {
	earlier := metav1.NewTime(testNow.Add(-time.Hour))
	now := metav1.NewTime(testNow)
	readyFalse := func(reason, msg string, at metav1.Time) kubevirtv1.VirtualMachineCondition {
		return kubevirtv1.VirtualMachineCondition{Type: kubevirtv1.VirtualMachineReady, Status: corev1.ConditionFalse,
			Reason: reason, Message: msg, LastTransitionTime: at}
	}
	starting := kubevirtv1.VirtualMachineStatus{
		Created: true, PrintableStatus: kubevirtv1.VirtualMachineStatusStarting, RunStrategy: kubevirtv1.RunStrategyAlways,
		DesiredGeneration: 3, ObservedGeneration: 3,
		Conditions: []kubevirtv1.VirtualMachineCondition{readyFalse(reasonVMINotReady, "VMI is not ready", earlier)},
	}
	withGen := func(v *kubevirtv1.VirtualMachineInstance) {
		v.Annotations = map[string]string{GenerationAnnotation: "3"}
	}
	tests := []struct {
		name string
		vm   *kubevirtv1.VirtualMachine
		in   statusInput
		want kubevirtv1.VirtualMachineStatus
	}{
		{
			name: "stopped VM",
			vm:   newVM(),
			in:   statusInput{runStrategy: kubevirtv1.RunStrategyHalted},
			want: kubevirtv1.VirtualMachineStatus{PrintableStatus: kubevirtv1.VirtualMachineStatusStopped, RunStrategy: kubevirtv1.RunStrategyHalted,
				DesiredGeneration: 3, Conditions: []kubevirtv1.VirtualMachineCondition{readyFalse(reasonVMINotExists, "VMI does not exist", now)}},
		},
		{
			name: "a new instance starts the VM",
			vm: newVM(func(vm *kubevirtv1.VirtualMachine) {
				vm.Status.Conditions = []kubevirtv1.VirtualMachineCondition{readyFalse(reasonVMINotExists, "VMI does not exist", earlier)}
			}),
			in:   statusInput{vmi: newVMI("", withGen), runStrategy: kubevirtv1.RunStrategyAlways},
			want: starting,
		},
		{
			name: "scheduling and scheduled change nothing: no write",
			vm:   newVM(func(vm *kubevirtv1.VirtualMachine) { vm.Status = *starting.DeepCopy() }),
			in:   statusInput{vmi: newVMI(kubevirtv1.Scheduled, withGen), runStrategy: kubevirtv1.RunStrategyAlways},
			want: starting,
		},
		{
			name: "running and ready",
			vm:   newVM(func(vm *kubevirtv1.VirtualMachine) { vm.Status = *starting.DeepCopy() }),
			in: statusInput{vmi: newVMI(kubevirtv1.Running, withGen, vmiCondition(kubevirtv1.VirtualMachineInstanceReady, "True", "")),
				runStrategy: kubevirtv1.RunStrategyAlways},
			want: kubevirtv1.VirtualMachineStatus{Created: true, Ready: true, PrintableStatus: kubevirtv1.VirtualMachineStatusRunning,
				RunStrategy: kubevirtv1.RunStrategyAlways, DesiredGeneration: 3, ObservedGeneration: 3,
				Conditions: []kubevirtv1.VirtualMachineCondition{{Type: kubevirtv1.VirtualMachineReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}},
		},
		{
			name: "paused, failure, foreign conditions kept, requests written",
			vm: newVM(func(vm *kubevirtv1.VirtualMachine) {
				vm.Status.Conditions = []kubevirtv1.VirtualMachineCondition{{Type: "DataVolumesReady", Status: corev1.ConditionTrue}}
			}),
			in: statusInput{vmi: newVMI(kubevirtv1.Running, vmiCondition(kubevirtv1.VirtualMachineInstancePaused, "True", "PausedByUser")),
				runStrategy: kubevirtv1.RunStrategyManual, requests: reqs(start()), syncErr: errors.New("boom"), syncErrReason: ReasonFailedDelete},
			want: kubevirtv1.VirtualMachineStatus{Created: true, PrintableStatus: kubevirtv1.VirtualMachineStatusPaused,
				RunStrategy: kubevirtv1.RunStrategyManual, DesiredGeneration: 3, StateChangeRequests: reqs(start()),
				Conditions: []kubevirtv1.VirtualMachineCondition{
					{Type: "DataVolumesReady", Status: corev1.ConditionTrue},
					readyFalse(reasonVMINotReady, "VMI is not ready", now),
					{Type: kubevirtv1.VirtualMachinePaused, Status: corev1.ConditionTrue, Reason: "PausedByUser", LastTransitionTime: now},
					{Type: kubevirtv1.VirtualMachineFailure, Status: corev1.ConditionTrue, Reason: ReasonFailedDelete, Message: "boom", LastTransitionTime: now},
				}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.vm, in.now = tc.vm, testNow
			got := computeStatus(in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if changed := statusChanged(&tc.vm.Status, &got); changed == cmp.Equal(tc.vm.Status, got) {
				t.Errorf("statusChanged = %v disagrees with cmp.Equal", changed)
			}
		})
	}
}
