package vm

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func corev1ConditionStatus(s string) corev1.ConditionStatus { return corev1.ConditionStatus(s) }

func TestRunStrategy(t *testing.T) {
	tests := []struct {
		name string
		vm   *kubevirtv1.VirtualMachine
		want kubevirtv1.VirtualMachineRunStrategy
	}{
		{"runStrategy", newVM(strategy(kubevirtv1.RunStrategyManual)), kubevirtv1.RunStrategyManual},
		{"running true", newVM(running(true)), kubevirtv1.RunStrategyAlways},
		{"running false", newVM(running(false)), kubevirtv1.RunStrategyHalted},
		{"neither", newVM(), kubevirtv1.RunStrategyHalted},
	}
	for _, tc := range tests {
		if got := RunStrategy(tc.vm); got != tc.want {
			t.Errorf("%s: RunStrategy = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestDecide covers every run strategy transition and the fencing cases.
func TestDecide(t *testing.T) {
	const (
		always = kubevirtv1.RunStrategyAlways
		rerun  = kubevirtv1.RunStrategyRerunOnFailure
		manual = kubevirtv1.RunStrategyManual
		halted = kubevirtv1.RunStrategyHalted
		once   = kubevirtv1.RunStrategyOnce
	)
	tests := []struct {
		name         string
		vm           *kubevirtv1.VirtualMachine
		vmi          *kubevirtv1.VirtualMachineInstance
		startFailure *kubevirtv1.VirtualMachineStartFailure
		want         plan
	}{
		// Always
		{name: "Always without instance creates", vm: newVM(strategy(always)), want: plan{action: actCreate}},
		{name: "running=true without instance creates", vm: newVM(running(true)), want: plan{action: actCreate}},
		{name: "Always with a running instance does nothing", vm: newVM(strategy(always)), vmi: newVMI(kubevirtv1.Running)},
		{name: "Always with a scheduling instance does nothing", vm: newVM(strategy(always)), vmi: newVMI(kubevirtv1.Scheduling)},
		{name: "Always deletes a succeeded instance", vm: newVM(strategy(always)), vmi: newVMI(kubevirtv1.Succeeded), want: plan{action: actDelete}},
		{name: "Always deletes a failed instance", vm: newVM(strategy(always)), vmi: newVMI(kubevirtv1.Failed), want: plan{action: actDelete}},
		{name: "fencing: Always waits for a terminating instance", vm: newVM(strategy(always)), vmi: newVMI(kubevirtv1.Running, vmiDeleting())},
		{name: "fencing: Always waits for a terminating final instance", vm: newVM(strategy(always)), vmi: newVMI(kubevirtv1.Failed, vmiDeleting())},
		{name: "Always backs off after failed starts", vm: newVM(strategy(always)), startFailure: failure(2, "old", 40*time.Second),
			want: plan{requeueAfter: 40 * time.Second}},
		{name: "Always starts once the back-off passed", vm: newVM(strategy(always)), startFailure: failure(2, "old", -time.Second),
			want: plan{action: actCreate}},
		// Halted
		{name: "Halted without instance does nothing", vm: newVM(strategy(halted))},
		{name: "running=false deletes a running instance", vm: newVM(running(false)), vmi: newVMI(kubevirtv1.Running), want: plan{action: actDelete}},
		{name: "Halted deletes a final instance", vm: newVM(strategy(halted)), vmi: newVMI(kubevirtv1.Succeeded), want: plan{action: actDelete}},
		{name: "Halted does not delete twice", vm: newVM(strategy(halted)), vmi: newVMI(kubevirtv1.Running, vmiDeleting())},
		{name: "Halted ignores the back-off", vm: newVM(strategy(halted)), startFailure: failure(3, "x", time.Minute)},
		{name: "Halted drops a Start request", vm: newVM(strategy(halted), requests(start()))},
		// RerunOnFailure
		{name: "RerunOnFailure on a new VM creates", vm: newVM(strategy(rerun)), want: plan{action: actCreate}},
		{name: "RerunOnFailure after switching from Halted creates", vm: newVM(strategy(rerun), statusStrategy(halted)), want: plan{action: actCreate}},
		{name: "RerunOnFailure leaves a stopped VM stopped", vm: newVM(strategy(rerun), statusStrategy(rerun))},
		{name: "RerunOnFailure restarts a failed instance through a Start request", vm: newVM(strategy(rerun), statusStrategy(rerun)),
			vmi: newVMI(kubevirtv1.Failed), want: plan{action: actDelete, requests: reqs(start())}},
		{name: "RerunOnFailure removes a succeeded instance without restart", vm: newVM(strategy(rerun), statusStrategy(rerun)),
			vmi: newVMI(kubevirtv1.Succeeded), want: plan{action: actDelete}},
		{name: "RerunOnFailure keeps a running instance", vm: newVM(strategy(rerun), statusStrategy(rerun)), vmi: newVMI(kubevirtv1.Running)},
		{name: "RerunOnFailure Start request waits for the back-off", vm: newVM(strategy(rerun), statusStrategy(rerun), requests(start())),
			startFailure: failure(1, "x", 10*time.Second), want: plan{requests: reqs(start()), requeueAfter: 10 * time.Second}},
		{name: "RerunOnFailure Start request creates once the instance is gone", vm: newVM(strategy(rerun), statusStrategy(rerun), requests(start())),
			want: plan{action: actCreate}},
		// Once
		{name: "Once without instance creates", vm: newVM(strategy(once)), want: plan{action: actCreate}},
		{name: "Once keeps a finished instance", vm: newVM(strategy(once)), vmi: newVMI(kubevirtv1.Succeeded)},
		{name: "Once keeps a failed instance", vm: newVM(strategy(once)), vmi: newVMI(kubevirtv1.Failed)},
		{name: "Once ignores the back-off", vm: newVM(strategy(once)), startFailure: failure(1, "x", time.Minute), want: plan{action: actCreate}},
		// Manual and the requests
		{name: "Manual without requests does nothing", vm: newVM(strategy(manual))},
		{name: "Manual keeps a finished instance", vm: newVM(strategy(manual)), vmi: newVMI(kubevirtv1.Succeeded)},
		{name: "Manual Start creates and consumes the request", vm: newVM(strategy(manual), requests(start())), want: plan{action: actCreate}},
		// virtctl start --paused
		{name: "a paused Start creates a paused instance", vm: newVM(strategy(manual), requests(startPaused())),
			want: plan{action: actCreate, startPaused: true}},
		{name: "Halted keeps a paused Start for when the VM becomes Always", vm: newVM(strategy(halted), requests(startPaused())),
			want: plan{requests: reqs(startPaused())}},
		{name: "Always creates the paused instance of a paused Start", vm: newVM(strategy(always), requests(startPaused())),
			want: plan{action: actCreate, startPaused: true}},
		{name: "a paused Start waits while the old instance terminates", vm: newVM(strategy(manual), requests(stop("vmi-1"), startPaused())),
			vmi: newVMI(kubevirtv1.Running, vmiDeleting()), want: plan{requests: reqs(startPaused())}},
		{name: "Manual Start is not backed off", vm: newVM(strategy(manual), requests(start())), startFailure: failure(4, "x", time.Minute),
			want: plan{action: actCreate}},
		{name: "Start on a running instance is consumed", vm: newVM(strategy(manual), requests(start())), vmi: newVMI(kubevirtv1.Running)},
		{name: "Start on a finished instance deletes it first and keeps the request", vm: newVM(strategy(manual), requests(start())),
			vmi: newVMI(kubevirtv1.Succeeded), want: plan{action: actDelete, requests: reqs(start())}},
		{name: "fencing: Start waits for a terminating instance", vm: newVM(strategy(manual), requests(start())),
			vmi: newVMI(kubevirtv1.Running, vmiDeleting()), want: plan{requests: reqs(start())}},
		{name: "Manual Stop with the instance's uid deletes it", vm: newVM(strategy(manual), requests(stop("vmi-1"))),
			vmi: newVMI(kubevirtv1.Running), want: plan{action: actDelete}},
		{name: "Stop without uid deletes any instance", vm: newVM(strategy(manual), requests(stop(""))),
			vmi: newVMI(kubevirtv1.Running), want: plan{action: actDelete}},
		{name: "Stop for an earlier instance is dropped", vm: newVM(strategy(manual), requests(stop("vmi-0"))), vmi: newVMI(kubevirtv1.Running)},
		{name: "Stop without instance is dropped", vm: newVM(strategy(manual), requests(stop("vmi-1")))},
		{name: "Stop of a terminating instance is dropped", vm: newVM(strategy(manual), requests(stop("vmi-1"))), vmi: newVMI(kubevirtv1.Running, vmiDeleting())},
		{name: "restart: Stop deletes, Start stays", vm: newVM(strategy(manual), requests(stop("vmi-1"), start())),
			vmi: newVMI(kubevirtv1.Running), want: plan{action: actDelete, requests: reqs(start())}},
		{name: "restart: Start waits while the old instance terminates", vm: newVM(strategy(manual), requests(stop("vmi-1"), start())),
			vmi: newVMI(kubevirtv1.Running, vmiDeleting()), want: plan{requests: reqs(start())}},
		{name: "restart: Start creates once the old instance is gone", vm: newVM(strategy(manual), requests(stop("vmi-1"), start())),
			want: plan{action: actCreate}},
		{name: "restart of an Always VM: Stop deletes", vm: newVM(strategy(always), requests(stop("vmi-1"), start())),
			vmi: newVMI(kubevirtv1.Running), want: plan{action: actDelete, requests: reqs(start())}},
		{name: "restart of an Always VM: new instance already running consumes Start", vm: newVM(strategy(always), requests(start())),
			vmi: newVMI(kubevirtv1.Scheduling, vmiUID("vmi-2"))},
		{name: "restart of a Halted VM only stops", vm: newVM(strategy(halted), requests(stop("vmi-1"), start())),
			vmi: newVMI(kubevirtv1.Running), want: plan{action: actDelete, requests: reqs(start())}},
		{name: "Stop of an Always VM deletes (restart)", vm: newVM(strategy(always), requests(stop("vmi-1"))),
			vmi: newVMI(kubevirtv1.Running), want: plan{action: actDelete}},
		// Deletion
		{name: "a VM being deleted creates nothing", vm: newVM(strategy(always), vmDeleting())},
		{name: "a VM being deleted deletes nothing (the garbage collector does)", vm: newVM(strategy(halted), vmDeleting()), vmi: newVMI(kubevirtv1.Running)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := decide(tc.vm, tc.vmi, tc.startFailure, testNow)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(plan{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func reqs(r ...kubevirtv1.VirtualMachineStateChangeRequest) []kubevirtv1.VirtualMachineStateChangeRequest {
	return r
}
