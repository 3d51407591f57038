package e2e

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// TestLauncherPodEndsWithItsLauncher: the launcher pod copies the containerDisk in a container
// beside the launcher, which stays (Ready) while the launcher runs and ends when it ends. The pod
// is the one the VMI controller renders, created here for an instance that does not exist (no
// owner, so no controller, garbage collector or node agent acts on it): when the launcher exits
// (SIGTERM from inside its container), the pod must end by itself, every container terminated.
// With a controller, the instance's end would have it delete a pod still running, hiding a copy
// container that never ends.
func TestLauncherPodEndsWithItsLauncher(t *testing.T) {
	e := newCtrlEnv(t, "e2e-podend")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	vmi := &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vmi-podend", Namespace: e.ns, UID: uuid.NewUUID()},
		Spec:       e.demoVM(kubevirtv1.RunStrategyManual).Spec.Template.Spec,
	}
	pod, err := launcherpod.Render(vmi, launcherpod.Config{UseEmulation: true})
	if err != nil {
		t.Fatal(err)
	}
	pod.OwnerReferences = nil
	if len(pod.Spec.InitContainers) != 0 || len(pod.Spec.Containers) != 2 {
		t.Fatalf("rendered pod has %d init containers and %d containers, want none and the launcher with one copy container",
			len(pod.Spec.InitContainers), len(pod.Spec.Containers))
	}
	pod, err = e.kube.CoreV1().Pods(e.ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	get := func() (*corev1.Pod, error) {
		p, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil && p.DeletionTimestamp != nil {
			t.Fatalf("pod %s is being deleted (phase %s)", p.Name, p.Status.Phase)
		}
		return p, err
	}

	f.waitFor("pod "+pod.Name+" Ready with its copy container", bootTimeout, func() (bool, error) {
		p, err := get()
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status == corev1.ConditionTrue, fmt.Errorf("Ready=%s: %s", c.Status, c.Message)
			}
		}
		return false, fmt.Errorf("no Ready condition (phase %s)", p.Status.Phase)
	})
	if out, err := e.c.Kubectl("logs", "-n", e.ns, pod.Name, "-c", launcherpod.ContainerDiskPrefix+"containerdisk"); err != nil {
		t.Errorf("logs of the copy container: %v", err)
	} else {
		t.Logf("copy container: %s", out)
	}

	if out, err := e.c.Kubectl("exec", "-n", e.ns, pod.Name, "-c", launcherpod.ComputeContainerName, "--", "kill", "-TERM", "1"); err != nil {
		t.Fatalf("kill -TERM 1 in the launcher: %v\n%s", err, out)
	}
	f.waitFor("pod "+pod.Name+" Succeeded by itself, every container terminated", controllerTimeout, func() (bool, error) {
		p, err := get()
		if err != nil {
			return false, err
		}
		if p.Status.Phase != corev1.PodSucceeded {
			return false, fmt.Errorf("phase %s, containers %+v", p.Status.Phase, p.Status.ContainerStatuses)
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
				return false, fmt.Errorf("container %s: %+v", cs.Name, cs.State)
			}
		}
		return true, nil
	})
	f.showWide("launcher ended")
	if err := e.kube.CoreV1().Pods(e.ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Error(err)
	}
}
