package e2e

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// TestLauncherPodEndsWithItsLauncher: the launcher pod copies the containerDisk in a container
// beside the launcher, which stays (Ready) while the launcher runs and ends when it ends. When
// the launcher exits (here on SIGTERM from inside its container, as when the guest is gone), the
// pod ends by itself, with every container terminated, and is not left running for the
// controller to delete.
func TestLauncherPodEndsWithItsLauncher(t *testing.T) {
	e := newCtrlEnv(t, "e2e-podend")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	vm := e.demoVM(kubevirtv1.RunStrategyManual)
	vmi := &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vmi-podend", Namespace: e.ns},
		Spec:       vm.Spec.Template.Spec,
	}
	if _, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running, pod := f.running(vmi.Name, "")

	f.waitFor("every container of "+pod.Name+" ready", controllerTimeout, func() (bool, error) {
		p, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if len(p.Spec.InitContainers) != 0 || len(p.Spec.Containers) < 2 {
			t.Fatalf("pod %s has %d init containers and %d containers, want none and the launcher with its copy containers",
				p.Name, len(p.Spec.InitContainers), len(p.Spec.Containers))
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status == corev1.ConditionTrue, fmt.Errorf("Ready=%s: %s", c.Status, c.Message)
			}
		}
		return false, fmt.Errorf("no Ready condition")
	})

	if out, err := e.c.Kubectl("exec", "-n", e.ns, pod.Name, "-c", launcherpod.ComputeContainerName, "--", "kill", "-TERM", "1"); err != nil {
		t.Fatalf("kill -TERM 1 in the launcher: %v\n%s", err, out)
	}
	f.waitFor("pod "+pod.Name+" ended by itself, every container terminated", controllerTimeout, func() (bool, error) {
		p, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.DeletionTimestamp != nil {
			t.Fatalf("pod %s was deleted (phase %s) instead of ending with its launcher", p.Name, p.Status.Phase)
		}
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			return false, fmt.Errorf("phase %s", p.Status.Phase)
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Terminated == nil {
				return false, fmt.Errorf("container %s not terminated: %+v", cs.Name, cs.State)
			}
		}
		return true, nil
	})
	f.waitFor("instance "+vmi.Name+" final", controllerTimeout, func() (bool, error) {
		v, err := f.vmi(vmi.Name)
		if err != nil {
			return false, err
		}
		if v.UID != running.UID {
			return false, fmt.Errorf("another instance %s", v.UID)
		}
		return v.Status.Phase == kubevirtv1.Succeeded || v.Status.Phase == kubevirtv1.Failed, fmt.Errorf("phase %s", v.Status.Phase)
	})
	f.showWide("launcher ended")
}
