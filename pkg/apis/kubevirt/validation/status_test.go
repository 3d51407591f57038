package validation

import (
	"testing"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestValidateVirtualMachineStatusUpdate(t *testing.T) {
	cases := []struct {
		name   string
		status kubevirtv1.VirtualMachineStatus
		want   []string
	}{
		{"empty", kubevirtv1.VirtualMachineStatus{}, nil},
		{"running with requests and conditions", kubevirtv1.VirtualMachineStatus{
			PrintableStatus: kubevirtv1.VirtualMachineStatusRunning, Created: true, Ready: true,
			StateChangeRequests: []kubevirtv1.VirtualMachineStateChangeRequest{{Action: kubevirtv1.StopRequest}, {Action: kubevirtv1.StartRequest}},
			Conditions:          []kubevirtv1.VirtualMachineCondition{{Type: kubevirtv1.VirtualMachineReady, Status: "True"}},
		}, nil},
		{"unknown printable status", kubevirtv1.VirtualMachineStatus{PrintableStatus: "Sleeping"},
			[]string{"NotSupported:status.printableStatus"}},
		{"unknown request", kubevirtv1.VirtualMachineStatus{
			StateChangeRequests: []kubevirtv1.VirtualMachineStateChangeRequest{{Action: kubevirtv1.StartRequest}, {Action: "Reboot"}}},
			[]string{"NotSupported:status.stateChangeRequests[1].action"}},
		{"condition without type", kubevirtv1.VirtualMachineStatus{Conditions: []kubevirtv1.VirtualMachineCondition{{Status: "True"}}},
			[]string{"Required:status.conditions[0].type"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			newVM := validVM()
			newVM.Status = tc.status
			compareErrs(t, tc.want, ValidateVirtualMachineStatusUpdate(newVM, validVM()))
		})
	}
}

func TestValidateVirtualMachineInstanceStatusUpdate(t *testing.T) {
	completed := &kubevirtv1.VirtualMachineInstanceMigrationState{Completed: true, TargetNode: "node-2"}
	cases := []struct {
		name     string
		old, new kubevirtv1.VirtualMachineInstanceStatus
		want     []string
	}{
		{"pending to scheduling", kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Pending},
			kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduling}, nil},
		{"node set when scheduled", kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduling},
			kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduled, NodeName: "node-1"}, nil},
		{"running to succeeded", kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "node-1"},
			kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Succeeded, NodeName: "node-1"}, nil},
		{"failed stays failed", kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Failed},
			kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Failed, Reason: "x"}, nil},
		{"unknown phase", kubevirtv1.VirtualMachineInstanceStatus{},
			kubevirtv1.VirtualMachineInstanceStatus{Phase: "Booting"}, []string{"NotSupported:status.phase"}},
		{"succeeded back to running", kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Succeeded},
			kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running}, []string{"Forbidden:status.phase"}},
		{"failed to succeeded", kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Failed},
			kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Succeeded}, []string{"Forbidden:status.phase"}},
		{"failed to empty", kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Failed},
			kubevirtv1.VirtualMachineInstanceStatus{}, []string{"Forbidden:status.phase"}},
		{"node changed", kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "node-1"},
			kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "node-2"}, []string{"Forbidden:status.nodeName"}},
		{"node cleared", kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "node-1"},
			kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running}, []string{"Forbidden:status.nodeName"}},
		{"node changed during a migration", kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "node-1"},
			kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "node-2",
				MigrationState: &kubevirtv1.VirtualMachineInstanceMigrationState{TargetNode: "node-2"}},
			[]string{"Forbidden:status.nodeName"}},
		{"node changed after a completed migration", kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "node-1"},
			kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "node-2", MigrationState: completed}, nil},
		{"condition without type", kubevirtv1.VirtualMachineInstanceStatus{},
			kubevirtv1.VirtualMachineInstanceStatus{Conditions: []kubevirtv1.VirtualMachineInstanceCondition{{Status: "True"}}},
			[]string{"Required:status.conditions[0].type"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldVMI, newVMI := validVMI(), validVMI()
			oldVMI.Status, newVMI.Status = tc.old, tc.new
			compareErrs(t, tc.want, ValidateVirtualMachineInstanceStatusUpdate(newVMI, oldVMI))
		})
	}
	// Every known phase is accepted from a fresh instance.
	for _, phase := range vmiPhases {
		oldVMI, newVMI := validVMI(), validVMI()
		newVMI.Status.Phase = phase
		compareErrs(t, nil, ValidateVirtualMachineInstanceStatusUpdate(newVMI, oldVMI))
	}
}
