package vm

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type vmOpt func(*kubevirtv1.VirtualMachine)

func newVM(opts ...vmOpt) *kubevirtv1.VirtualMachine {
	vm := &kubevirtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-cirros", Namespace: "default", UID: "vm-uid", Generation: 3, ResourceVersion: "10"},
		Spec: kubevirtv1.VirtualMachineSpec{
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kubevirt.io/vm": "vm-cirros"}},
				Spec: kubevirtv1.VirtualMachineInstanceSpec{
					Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{UUID: "fw-uuid"}},
				},
			},
		},
	}
	for _, o := range opts {
		o(vm)
	}
	return vm
}

func strategy(s kubevirtv1.VirtualMachineRunStrategy) vmOpt {
	return func(vm *kubevirtv1.VirtualMachine) { vm.Spec.RunStrategy = ptr.To(s) }
}

func running(b bool) vmOpt {
	return func(vm *kubevirtv1.VirtualMachine) { vm.Spec.Running = ptr.To(b) }
}

func statusStrategy(s kubevirtv1.VirtualMachineRunStrategy) vmOpt {
	return func(vm *kubevirtv1.VirtualMachine) { vm.Status.RunStrategy = s }
}

func requests(reqs ...kubevirtv1.VirtualMachineStateChangeRequest) vmOpt {
	return func(vm *kubevirtv1.VirtualMachine) { vm.Status.StateChangeRequests = reqs }
}

func vmDeleting() vmOpt {
	return func(vm *kubevirtv1.VirtualMachine) { vm.DeletionTimestamp = &metav1.Time{Time: testNow} }
}

func start() kubevirtv1.VirtualMachineStateChangeRequest {
	return kubevirtv1.VirtualMachineStateChangeRequest{Action: kubevirtv1.StartRequest}
}

// startPaused is the start request of virtctl start --paused.
func startPaused() kubevirtv1.VirtualMachineStateChangeRequest {
	r := start()
	r.Data = map[string]string{kubevirtv1.StartRequestDataPausedKey: kubevirtv1.StartRequestDataPausedTrue}
	return r
}

func stop(uid types.UID) kubevirtv1.VirtualMachineStateChangeRequest {
	r := kubevirtv1.VirtualMachineStateChangeRequest{Action: kubevirtv1.StopRequest}
	if uid != "" {
		r.UID = &uid
	}
	return r
}

type vmiOpt func(*kubevirtv1.VirtualMachineInstance)

func newVMI(phase kubevirtv1.VirtualMachineInstancePhase, opts ...vmiOpt) *kubevirtv1.VirtualMachineInstance {
	vmi := &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-cirros", Namespace: "default", UID: "vmi-1", ResourceVersion: "20",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vm-cirros",
				UID: "vm-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
	}
	vmi.Status.Phase = phase
	for _, o := range opts {
		o(vmi)
	}
	return vmi
}

func vmiDeleting() vmiOpt {
	return func(vmi *kubevirtv1.VirtualMachineInstance) { vmi.DeletionTimestamp = &metav1.Time{Time: testNow} }
}

func vmiUID(uid types.UID) vmiOpt {
	return func(vmi *kubevirtv1.VirtualMachineInstance) { vmi.UID = uid }
}

func vmiCondition(t kubevirtv1.VirtualMachineInstanceConditionType, s string, reason string) vmiOpt {
	return func(vmi *kubevirtv1.VirtualMachineInstance) {
		vmi.Status.Conditions = append(vmi.Status.Conditions, kubevirtv1.VirtualMachineInstanceCondition{
			Type: t, Status: corev1ConditionStatus(s), Reason: reason})
	}
}

func vmiRan() vmiOpt {
	return func(vmi *kubevirtv1.VirtualMachineInstance) {
		vmi.Status.PhaseTransitionTimestamps = append(vmi.Status.PhaseTransitionTimestamps,
			kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: kubevirtv1.Running})
	}
}

func orphan() vmiOpt {
	return func(vmi *kubevirtv1.VirtualMachineInstance) { vmi.OwnerReferences = nil }
}

func ownedBy(uid types.UID) vmiOpt {
	return func(vmi *kubevirtv1.VirtualMachineInstance) { vmi.OwnerReferences[0].UID = uid }
}

func failure(count int32, uid types.UID, retryIn time.Duration) *kubevirtv1.VirtualMachineStartFailure {
	t := metav1.NewTime(testNow.Add(retryIn))
	return &kubevirtv1.VirtualMachineStartFailure{ConsecutiveFailCount: count, LastFailedVMIUID: uid, RetryAfterTimestamp: &t}
}
