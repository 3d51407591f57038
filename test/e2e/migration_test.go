package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/migration"
)

// TestMigrationUnschedulableTargetCanceled: `nativevirt migrate` with an added node selector no
// node matches creates a migration whose target pod the real scheduler cannot place: the
// migration stays Scheduling with the scheduler's reason, the guest keeps running in its pod, and
// `nativevirt migrate-cancel` removes the target pod and the migration.
func TestMigrationUnschedulableTargetCanceled(t *testing.T) {
	e := newCtrlEnv(t, "e2e-mig")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, e.demoVM(kubevirtv1.RunStrategyAlways), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi, source := f.running(demoVM, "")
	f.waitFor("LiveMigratable=True", controllerTimeout, func() (bool, error) {
		s, err := f.condition(demoVM, kubevirtv1.VirtualMachineInstanceIsMigratable)
		return s == corev1.ConditionTrue, err
	})

	f.cli.run("migrate", demoVM, "--added-node-selector", "nativevirt.io/e2e-no-such-node=true")
	var m *kubevirtv1.VirtualMachineInstanceMigration
	f.waitFor("the migration Scheduling with an unschedulable target pod", controllerTimeout, func() (bool, error) {
		list, err := e.kv.KubevirtV1().VirtualMachineInstanceMigrations(e.ns).List(ctx, metav1.ListOptions{
			LabelSelector: kubevirtv1.MigrationSelectorLabel + "=" + demoVM})
		if err != nil || len(list.Items) != 1 {
			return false, fmt.Errorf("%d migrations (%v)", len(list.Items), err)
		}
		m = &list.Items[0]
		for _, c := range m.Status.Conditions {
			if c.Type == migration.ConditionTargetPodUnschedulable && c.Status == corev1.ConditionTrue {
				return m.Status.Phase == kubevirtv1.MigrationScheduling, nil
			}
		}
		return false, fmt.Errorf("phase %s conditions %+v", m.Status.Phase, m.Status.Conditions)
	})
	out, _ := e.c.Kubectl("get", "vmim", "-n", e.ns)
	t.Logf("$ kubectl get vmim\n%s", out)
	out, _ = e.c.Kubectl("get", "vmim", "-n", e.ns, "-o", "jsonpath={.items[0].status.conditions}")
	t.Logf("migration conditions: %s", out)
	pods, err := f.launcherPods(vmi.UID)
	if err != nil || len(pods) != 2 {
		t.Fatalf("launcher pods: %d (%v), want the source and the target", len(pods), err)
	}
	var target string
	for _, p := range pods {
		if p.Labels[kubevirtv1.MigrationJobLabel] == string(m.UID) {
			target = p.Name
			if p.Spec.NodeName != "" {
				t.Errorf("target pod %s bound to %s", p.Name, p.Spec.NodeName)
			}
		}
	}
	if target == "" {
		t.Fatalf("no target pod labelled %s=%s", kubevirtv1.MigrationJobLabel, m.UID)
	}
	if got := e.vm(demoVM).Status.PrintableStatus; got != kubevirtv1.VirtualMachineStatusRunning {
		t.Errorf("VM printableStatus %s while the target waits for a node, want Running", got)
	}
	if v, err := f.vmi(demoVM); err != nil || v.Status.Phase != kubevirtv1.Running || v.Status.MigrationState != nil {
		t.Errorf("instance during the unschedulable migration: %+v (err %v)", v.Status, err)
	}

	f.cli.run("migrate-cancel", demoVM)
	f.waitFor("the migration and its target pod gone", controllerTimeout, func() (bool, error) {
		if _, err := e.kv.KubevirtV1().VirtualMachineInstanceMigrations(e.ns).Get(ctx, m.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("migration still there (%v)", err)
		}
		if _, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, target, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("target pod still there (%v)", err)
		}
		return true, nil
	})
	events, _ := e.c.Kubectl("get", "events", "-n", e.ns, "--field-selector", "involvedObject.kind=VirtualMachineInstanceMigration",
		"-o", "custom-columns=REASON:.reason,MESSAGE:.message", "--sort-by=.lastTimestamp")
	t.Logf("migration events:\n%s", events)
	for _, want := range []string{migration.EventSuccessfulCreate, migration.EventTargetUnschedulable, migration.EventFailedMigration} {
		if !strings.Contains(events, want) {
			t.Errorf("no %s event on the migration", want)
		}
	}
	v, pod := f.running(demoVM, "")
	if v.UID != vmi.UID || pod.UID != source.UID {
		t.Errorf("the guest moved or restarted: instance %s pod %s, want %s %s", v.UID, pod.Name, vmi.UID, source.Name)
	}
	f.consoleCheck(demoVM)
}
