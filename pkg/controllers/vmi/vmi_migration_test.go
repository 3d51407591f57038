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

func migrationTarget(uid string) podOpt {
	return func(p *corev1.Pod) { p.Labels[kubevirtv1.MigrationJobLabel] = uid }
}

func image(img string) podOpt {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Image = img }
}

func TestCurrentPodDuringMigration(t *testing.T) {
	source := newPod("source", bound("node-a"), podPhase(corev1.PodRunning), createdAt(-10*time.Minute))
	pendingTarget := newPod("target", migrationTarget("m1"), podPhase(corev1.PodPending))
	target := newPod("target", migrationTarget("m1"), bound("node-b"), podPhase(corev1.PodRunning))
	sourceDone := newPod("source", bound("node-a"), podPhase(corev1.PodSucceeded), createdAt(-10*time.Minute))
	tests := []struct {
		name string
		node string
		pods []*corev1.Pod
		want string
	}{
		{name: "unbound target does not count", node: "node-a", pods: []*corev1.Pod{source, pendingTarget}, want: "source"},
		{name: "newer target on another node does not count", node: "node-a", pods: []*corev1.Pod{source, target}, want: "source"},
		{name: "after the handover the target counts", node: "node-b", pods: []*corev1.Pod{source, target}, want: "target"},
		{name: "after the handover, source ended", node: "node-b", pods: []*corev1.Pod{sourceDone, target}, want: "target"},
		{name: "a target alone before any node is not the pod", node: "", pods: []*corev1.Pod{pendingTarget}, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vmi := testVMI(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.NodeName = tc.node })
			got := ""
			if p := currentPod(vmi, tc.pods); p != nil {
				got = p.Name
			}
			if got != tc.want {
				t.Errorf("currentPod = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSyncDuringMigration: the VMI controller neither deletes a migration's pods nor fails the
// instance while a migration runs; it reports both pods, and after the handover the target pod
// is the instance's pod. The lingering source pod is the migration controller's to delete.
func TestSyncDuringMigration(t *testing.T) {
	running := func(node string) func(*kubevirtv1.VirtualMachineInstance) {
		return func(v *kubevirtv1.VirtualMachineInstance) {
			v.Status.Phase = kubevirtv1.Running
			v.Status.NodeName = node
			v.Status.ActivePods = map[types.UID]string{"source-uid": "node-a"}
			v.Status.LauncherContainerImageVersion = "launcher:1"
		}
	}
	source := newPod("source", bound("node-a"), podPhase(corev1.PodRunning), createdAt(-10*time.Minute))
	f := newFixture(t, testVMI(running("node-a")), source)
	if got := f.sync(); len(got) != 0 {
		t.Fatalf("steady state writes %v", got)
	}

	// The migration controller created the target pod: both pods are reported, nothing deleted.
	target := newPod("target", migrationTarget("m1"), image("launcher:2"), podPhase(corev1.PodPending))
	_ = f.podStore.Add(target)
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, f.sync()); diff != "" {
		t.Fatalf("target created (-want +got):\n%s", diff)
	}
	vmi := f.refresh()
	if diff := cmp.Diff(map[types.UID]string{"source-uid": "node-a", "target-uid": ""}, vmi.Status.ActivePods); diff != "" {
		t.Errorf("activePods (-want +got):\n%s", diff)
	}
	if vmi.Status.LauncherContainerImageVersion != "launcher:1" || vmi.Status.Phase != kubevirtv1.Running {
		t.Errorf("the target pod was taken for the instance's pod: %+v", vmi.Status)
	}

	// Bound and running on node-b; then the target pod dies: the instance keeps running.
	bound("node-b")(target)
	podPhase(corev1.PodRunning)(target)
	_ = f.podStore.Update(target)
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, f.sync()); diff != "" {
		t.Fatalf("target bound (-want +got):\n%s", diff)
	}
	f.refresh()
	failed := target.DeepCopy()
	podPhase(corev1.PodFailed)(failed)
	_ = f.podStore.Update(failed)
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, f.sync()); diff != "" {
		t.Fatalf("target failed (-want +got):\n%s", diff)
	}
	if vmi = f.refresh(); vmi.Status.Phase != kubevirtv1.Running || len(vmi.Status.ActivePods) != 1 {
		t.Errorf("after the target pod failed: phase %s activePods %v", vmi.Status.Phase, vmi.Status.ActivePods)
	}
	_ = f.podStore.Update(target)

	// Handover (the migration controller moved status.nodeName): the target is the pod now, and
	// the source pod, still running, is left alone.
	vmi = f.refresh()
	vmi.Status.NodeName = "node-b"
	if _, err := f.kv.KubevirtV1().VirtualMachineInstances("default").UpdateStatus(t.Context(), vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.refresh()
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, f.sync()); diff != "" {
		t.Fatalf("after the handover (-want +got):\n%s", diff)
	}
	if vmi = f.refresh(); vmi.Status.LauncherContainerImageVersion != "launcher:2" {
		t.Errorf("after the handover the instance's pod is not the target: image %q", vmi.Status.LauncherContainerImageVersion)
	}
	if got := f.sync(); len(got) != 0 {
		t.Errorf("steady state after the handover writes %v", got)
	}
	// The source pod ends by itself: reported.
	podPhase(corev1.PodSucceeded)(source)
	_ = f.podStore.Update(source)
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, f.sync()); diff != "" {
		t.Fatalf("source ended (-want +got):\n%s", diff)
	}
	if vmi = f.refresh(); !cmp.Equal(vmi.Status.ActivePods, map[types.UID]string{"target-uid": "node-b"}) {
		t.Errorf("activePods after the source ended: %v", vmi.Status.ActivePods)
	}
}
