package agent

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// setPodReady sets the launcher pod's Ready condition as the kubelet reports its probes.
func (e *env) setPodReady(status corev1.ConditionStatus, reason, msg string) {
	e.t.Helper()
	pod, err := e.agent.instances.pods.Pods(ns).Get("virt-launcher-vm-abcde")
	if err != nil {
		e.t.Fatal(err)
	}
	pod = pod.DeepCopy()
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, Reason: reason, Message: msg}}
	if err := e.pods.Update(pod); err != nil {
		e.t.Fatal(err)
	}
}

// TestReadyFollowsTheReadinessProbe: with a readiness probe (the launcher pod's, run by the
// kubelet) the instance is Ready when the pod is, and says why not; without one it is Ready as
// soon as the guest runs.
func TestReadyFollowsTheReadinessProbe(t *testing.T) {
	e := newEnv(t)
	vmi := scheduledVMI()
	vmi.Spec.ReadinessProbe = &kubevirtv1.Probe{Handler: kubevirtv1.Handler{
		TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(22)}}}
	e.addVMI(vmi)
	e.addLauncher(true)
	e.sync()
	if got := e.getVMI().Status.Phase; got != kubevirtv1.Running {
		t.Fatalf("phase = %s, want Running", got)
	}
	c := e.condition(kubevirtv1.VirtualMachineInstanceReady)
	if c == nil || c.Status != corev1.ConditionFalse || c.Reason != kubevirtv1.PodConditionMissingReason {
		t.Errorf("Ready before the kubelet reported = %+v, want False/%s", c, kubevirtv1.PodConditionMissingReason)
	}

	e.setPodReady(corev1.ConditionFalse, "ContainersNotReady", "containers with unready status: [compute]")
	e.sync()
	c = e.condition(kubevirtv1.VirtualMachineInstanceReady)
	if c == nil || c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotReady" ||
		c.Message != "containers with unready status: [compute]" {
		t.Errorf("Ready with the probe failing = %+v, want the pod's False condition", c)
	}

	e.setPodReady(corev1.ConditionTrue, "", "")
	e.sync()
	if c = e.condition(kubevirtv1.VirtualMachineInstanceReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Ready with the probe passing = %+v, want True", c)
	}

	// Without a probe the pod's readiness does not matter.
	e2 := startRunning(t)
	e2.setPodReady(corev1.ConditionFalse, "ContainersNotReady", "")
	e2.sync()
	if c := e2.condition(kubevirtv1.VirtualMachineInstanceReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Ready without a probe = %+v, want True", c)
	}
}

// TestGuestStoppedForTheKubelet: the launcher shuts the guest down when it is told to end. When
// neither the instance nor the pod is being deleted, the kubelet ended it on its own (a failed
// liveness probe): the instance fails, although the guest powered off cleanly. A pod deletion
// is not a failure.
func TestGuestStoppedForTheKubelet(t *testing.T) {
	for _, tt := range []struct {
		name        string
		podDeleting bool
		want        kubevirtv1.VirtualMachineInstancePhase
	}{
		{"liveness probe failed", false, kubevirtv1.Failed},
		{"pod deleted", true, kubevirtv1.Succeeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := startRunning(t)
			if tt.podDeleting {
				pod, err := e.agent.instances.pods.Pods(ns).Get("virt-launcher-vm-abcde")
				if err != nil {
					t.Fatal(err)
				}
				pod = pod.DeepCopy()
				now := metav1.NewTime(e.now)
				pod.DeletionTimestamp = &now
				if err := e.pods.Update(pod); err != nil {
					t.Fatal(err)
				}
			}
			marker := filepath.Join(podfs.Locator{KubeletRoot: e.root}.EmptyDir(podUID, podfs.PrivateVolume), podfs.TerminatedMarker)
			if err := os.WriteFile(marker, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			e.daemon.SetState(domain, virt.StateShutoff, virt.ReasonShutdown)
			e.sync()
			if got := e.getVMI().Status.Phase; got != tt.want {
				t.Errorf("phase = %s, want %s", got, tt.want)
			}
		})
	}
}
