package vmi

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type podOpt func(*corev1.Pod)

func newPod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), ResourceVersion: "1",
			CreationTimestamp: metav1.NewTime(testNow.Add(-time.Minute)),
			Labels:            map[string]string{"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": "vmi-uid"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance", Name: "vmi",
				UID: "vmi-uid", Controller: boolPtr(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Image: "launcher:1"}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func boolPtr(b bool) *bool { return &b }

func bound(node string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = node
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
	}
}

func podPhase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

// containerEnded adds a container that terminated with code and reason.
func containerEnded(name string, code int32, reason string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: name,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}}})
	}
}

func podDeleting() podOpt {
	return func(p *corev1.Pod) { t := metav1.NewTime(testNow); p.DeletionTimestamp = &t }
}

func unschedulable(msg string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled,
			Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: msg})
	}
}

func createdAt(d time.Duration) podOpt {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(testNow.Add(d)) }
}

func TestNextPhase(t *testing.T) {
	tests := []struct {
		name       string
		old        kubevirtv1.VirtualMachineInstancePhase
		pod        *corev1.Pod
		want       kubevirtv1.VirtualMachineInstancePhase
		wantReason string
	}{
		{name: "new, no pod", old: "", want: kubevirtv1.Pending},
		{name: "pod created", old: "", pod: newPod("p"), want: kubevirtv1.Scheduling},
		{name: "pod pending", old: kubevirtv1.Scheduling, pod: newPod("p", podPhase(corev1.PodPending)), want: kubevirtv1.Scheduling},
		{name: "bound, containers starting", old: kubevirtv1.Scheduling, pod: newPod("p", bound("n1"), podPhase(corev1.PodPending)), want: kubevirtv1.Scheduled},
		{name: "bound and running", old: kubevirtv1.Scheduling, pod: newPod("p", bound("n1"), podPhase(corev1.PodRunning)), want: kubevirtv1.Scheduled},
		{name: "running pod seen late", old: kubevirtv1.Pending, pod: newPod("p", bound("n1"), podPhase(corev1.PodRunning)), want: kubevirtv1.Scheduled},
		{name: "pod failed while scheduling", old: kubevirtv1.Scheduling, pod: newPod("p", podPhase(corev1.PodFailed)), want: kubevirtv1.Failed, wantReason: ReasonPodFailed},
		{name: "launcher exited before the guest ran", old: kubevirtv1.Scheduled, pod: newPod("p", bound("n1"), podPhase(corev1.PodSucceeded)),
			want: kubevirtv1.Failed, wantReason: ReasonPodFailed},
		{name: "pod deleted before the guest ran", old: kubevirtv1.Scheduled, pod: newPod("p", bound("n1"), podPhase(corev1.PodRunning), podDeleting()),
			want: kubevirtv1.Failed, wantReason: ReasonPodTerminating},
		{name: "a copy container could not start (the runtime failed it)", old: kubevirtv1.Scheduled,
			pod:  newPod("p", bound("n1"), podPhase(corev1.PodRunning), containerEnded("container-disk-root", 128, "StartError")),
			want: kubevirtv1.Failed, wantReason: ReasonCopyFailed},
		{name: "a kernel boot copy failed", old: kubevirtv1.Scheduled,
			pod:  newPod("p", bound("n1"), podPhase(corev1.PodRunning), containerEnded("kernel-boot-kernel", 1, "Error")),
			want: kubevirtv1.Failed, wantReason: ReasonCopyFailed},
		{name: "a copy that ended well, or another container, is no failure", old: kubevirtv1.Scheduled,
			pod:  newPod("p", bound("n1"), podPhase(corev1.PodRunning), containerEnded("container-disk-root", 0, "Completed"), containerEnded("sidecar", 1, "Error")),
			want: kubevirtv1.Scheduled},
		{name: "pod disappeared while scheduling", old: kubevirtv1.Scheduling, want: kubevirtv1.Failed, wantReason: ReasonPodNotExists},
		{name: "pod disappeared once scheduled", old: kubevirtv1.Scheduled, want: kubevirtv1.Failed, wantReason: ReasonPodNotExists},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := nextPhase(tc.old, tc.pod)
			if got != tc.want || reason != tc.wantReason {
				t.Errorf("nextPhase = %s/%s, want %s/%s", got, reason, tc.want, tc.wantReason)
			}
		})
	}
}

func TestComputeStatus(t *testing.T) {
	ts := func(p kubevirtv1.VirtualMachineInstancePhase) kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp {
		return kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: p, PhaseTransitionTimestamp: metav1.NewTime(testNow)}
	}
	qos := corev1.PodQOSBurstable
	tests := []struct {
		name string
		old  kubevirtv1.VirtualMachineInstanceStatus
		pods []*corev1.Pod
		want kubevirtv1.VirtualMachineInstanceStatus
	}{
		{
			name: "pod created: Scheduling",
			pods: []*corev1.Pod{newPod("p", func(p *corev1.Pod) { p.Status.QOSClass = qos })},
			want: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduling,
				PhaseTransitionTimestamps: []kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{ts(kubevirtv1.Scheduling)},
				ActivePods:                map[types.UID]string{"p-uid": ""}, QOSClass: &qos, LauncherContainerImageVersion: "launcher:1"},
		},
		{
			name: "bound and running: Scheduled on the node",
			old:  kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduling},
			pods: []*corev1.Pod{newPod("p", bound("n1"), podPhase(corev1.PodRunning))},
			want: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduled, NodeName: "n1",
				PhaseTransitionTimestamps: []kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{ts(kubevirtv1.Scheduled)},
				Conditions:                []kubevirtv1.VirtualMachineInstanceCondition{{Type: podScheduled, Status: corev1.ConditionTrue}},
				ActivePods:                map[types.UID]string{"p-uid": "n1"}, LauncherContainerImageVersion: "launcher:1"},
		},
		{
			name: "unschedulable",
			old:  kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduling},
			pods: []*corev1.Pod{newPod("p", unschedulable("0/1 nodes are available"))},
			want: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduling,
				Conditions: []kubevirtv1.VirtualMachineInstanceCondition{{Type: podScheduled, Status: corev1.ConditionFalse,
					Reason: "Unschedulable", Message: "0/1 nodes are available"}},
				ActivePods: map[types.UID]string{"p-uid": ""}, LauncherContainerImageVersion: "launcher:1"},
		},
		{
			name: "the node agent's phases are left alone",
			old:  kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "n1"},
			pods: []*corev1.Pod{newPod("p", bound("n1"), podPhase(corev1.PodFailed))},
			want: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "n1",
				Conditions:                    []kubevirtv1.VirtualMachineInstanceCondition{{Type: podScheduled, Status: corev1.ConditionTrue}},
				LauncherContainerImageVersion: "launcher:1"},
		},
		{
			name: "the live pod counts over a terminating older one",
			old:  kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduling},
			pods: []*corev1.Pod{newPod("old", podDeleting(), createdAt(-time.Hour)), newPod("new", bound("n2"), podPhase(corev1.PodRunning))},
			want: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduled, NodeName: "n2",
				PhaseTransitionTimestamps: []kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{ts(kubevirtv1.Scheduled)},
				Conditions:                []kubevirtv1.VirtualMachineInstanceCondition{{Type: podScheduled, Status: corev1.ConditionTrue}},
				ActivePods:                map[types.UID]string{"new-uid": "n2"}, LauncherContainerImageVersion: "launcher:1"},
		},
		{
			name: "no pod, Scheduled before: Failed, other fields kept",
			old:  kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduled, NodeName: "n1", ActivePods: map[types.UID]string{"p-uid": "n1"}},
			want: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Failed, Reason: ReasonPodNotExists, NodeName: "n1",
				ActivePods:                map[types.UID]string{"p-uid": "n1"},
				PhaseTransitionTimestamps: []kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{ts(kubevirtv1.Failed)}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vmi := &kubevirtv1.VirtualMachineInstance{Status: tc.old}
			got := computeStatus(vmi, tc.pods, testNow)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteWorthy(t *testing.T) {
	cond := func(s corev1.ConditionStatus, reason, msg string) []kubevirtv1.VirtualMachineInstanceCondition {
		return []kubevirtv1.VirtualMachineInstanceCondition{{Type: podScheduled, Status: s, Reason: reason, Message: msg}}
	}
	st := func(phase kubevirtv1.VirtualMachineInstancePhase, node string, c []kubevirtv1.VirtualMachineInstanceCondition) kubevirtv1.VirtualMachineInstanceStatus {
		return kubevirtv1.VirtualMachineInstanceStatus{Phase: phase, NodeName: node, Conditions: c}
	}
	tests := []struct {
		name     string
		old, new kubevirtv1.VirtualMachineInstanceStatus
		want     bool
	}{
		{name: "phase", old: st(kubevirtv1.Scheduling, "", nil), new: st(kubevirtv1.Scheduled, "n1", nil), want: true},
		{name: "bound but not running yet", old: st(kubevirtv1.Scheduling, "", nil), new: st(kubevirtv1.Scheduling, "", cond("True", "", "")), want: false},
		{name: "activePods alone", old: st(kubevirtv1.Scheduling, "", nil),
			new: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduling, ActivePods: map[types.UID]string{"u": "n"}}, want: false},
		{name: "becomes unschedulable", old: st(kubevirtv1.Scheduling, "", nil), new: st(kubevirtv1.Scheduling, "", cond("False", "Unschedulable", "m")), want: true},
		{name: "scheduler message changes", old: st(kubevirtv1.Scheduling, "", cond("False", "Unschedulable", "m")),
			new: st(kubevirtv1.Scheduling, "", cond("False", "Unschedulable", "m2")), want: true},
		{name: "scheduled after being unschedulable", old: st(kubevirtv1.Scheduling, "", cond("False", "Unschedulable", "m")),
			new: st(kubevirtv1.Scheduling, "", cond("True", "", "")), want: true},
		{name: "same", old: st(kubevirtv1.Scheduling, "", cond("False", "Unschedulable", "m")),
			new: st(kubevirtv1.Scheduling, "", cond("False", "Unschedulable", "m")), want: false},
	}
	for _, tc := range tests {
		if got := writeWorthy(&tc.old, &tc.new); got != tc.want {
			t.Errorf("%s: writeWorthy = %v, want %v", tc.name, got, tc.want)
		}
	}
}
