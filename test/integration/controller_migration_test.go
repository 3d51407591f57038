package integration

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// nodeAgentStatus writes an instance's status as a node agent does, retrying on conflicts with
// the controllers' writes.
func (e *controllerEnv) nodeAgentStatus(name string, mutate func(st *kubevirtv1.VirtualMachineInstanceStatus)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		v, err := e.vmi(name)
		if err != nil {
			return err
		}
		mutate(&v.Status)
		_, err = e.admin.KubevirtV1().VirtualMachineInstances(ns).UpdateStatus(context.Background(), v, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// targetPod waits for the target pod of migration uid.
func (e *controllerEnv) targetPod(uid string) *corev1.Pod {
	e.t.Helper()
	var pod *corev1.Pod
	e.eventually("the target pod", func() (bool, error) {
		list, err := e.kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: kubevirtv1.MigrationJobLabel + "=" + uid})
		if err != nil || len(list.Items) != 1 {
			if err == nil {
				ms, _ := e.admin.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(context.Background(), metav1.ListOptions{})
				err = fmt.Errorf("%d target pods; migrations: %+v", len(list.Items), ms.Items)
			}
			return false, err
		}
		pod = &list.Items[0]
		return true, nil
	})
	return pod
}

func (e *controllerEnv) migration(name string) (*kubevirtv1.VirtualMachineInstanceMigration, error) {
	return e.admin.KubevirtV1().VirtualMachineInstanceMigrations(ns).Get(context.Background(), name, metav1.GetOptions{})
}

func (e *controllerEnv) migrationPhase(name string, want kubevirtv1.VirtualMachineInstanceMigrationPhase) *kubevirtv1.VirtualMachineInstanceMigration {
	e.t.Helper()
	var m *kubevirtv1.VirtualMachineInstanceMigration
	e.eventually("migration "+name+" "+string(want), func() (bool, error) {
		var err error
		m, err = e.migration(name)
		if err == nil && m.Status.Phase != want {
			err = fmt.Errorf("phase %s, conditions %+v", m.Status.Phase, m.Status.Conditions)
		}
		return err == nil, err
	})
	return m
}

// TestControllerMigration runs a live migration through the real apiserver and every controller,
// the node agents, the scheduler and the kubelet simulated: the migrate subresource creates the
// migration, the controller creates the target pod, hands off (the server mirrors the target
// label the target node agent watches), follows the agents, and hands the instance over. Then a
// second migration is canceled by deleting it.
func TestControllerMigration(t *testing.T) {
	env := startControllers(t)
	ctx := context.Background()
	const name = "vm-mig"
	env.createVM(name, kubevirtv1.RunStrategyAlways)
	env.eventually("the instance", func() (bool, error) { _, err := env.vmi(name); return err == nil, nil })
	vmi, _ := env.vmi(name)
	source := env.launcherPod(vmi.UID)
	env.schedule(source, "node1")
	env.eventually("Scheduled", func() (bool, error) {
		v, err := env.vmi(name)
		return err == nil && v.Status.Phase == kubevirtv1.Scheduled, err
	})
	env.nodeAgentStatus(name, func(st *kubevirtv1.VirtualMachineInstanceStatus) {
		st.Phase = kubevirtv1.Running
		st.Conditions = append(st.Conditions, kubevirtv1.VirtualMachineInstanceCondition{
			Type: kubevirtv1.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionTrue})
	})
	env.printable(name, kubevirtv1.VirtualMachineStatusRunning)

	// `virtctl migrate`: the subresource creates the migration.
	if err := env.admin.KubevirtV1().RESTClient().Put().Namespace(ns).Resource("virtualmachines").Name(name).
		SubResource("migrate").Body([]byte(`{}`)).Do(ctx).Error(); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	list, err := env.admin.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(ctx, metav1.ListOptions{LabelSelector: kubevirtv1.MigrationSelectorLabel + "=" + name})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("migrations of %s: %v (err %v)", name, list, err)
	}
	migName, migUID := list.Items[0].Name, string(list.Items[0].UID)
	target := env.targetPod(migUID)
	env.migrationPhase(migName, kubevirtv1.MigrationScheduling)
	if target.Spec.Affinity == nil || target.Spec.Affinity.NodeAffinity == nil {
		t.Fatalf("target pod has no node affinity")
	}

	// The scheduler places it on node2 and the launcher starts: handoff, PreparingTarget.
	target = target.DeepCopy()
	target.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "compute", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	env.schedule(target, "node2")
	env.migrationPhase(migName, kubevirtv1.MigrationPreparingTarget)
	env.eventually("the target label on the instance", func() (bool, error) {
		v, err := env.vmi(name)
		return err == nil && v.Labels[kubevirtv1.MigrationTargetNodeNameLabel] == "node2" &&
			v.Status.MigrationState != nil && v.Status.MigrationState.SourcePod == source.Name, err
	})
	env.printable(name, kubevirtv1.VirtualMachineStatusMigrating)

	// The node agents: target prepared, transfer started, completed, guest seen on the target.
	env.nodeAgentStatus(name, func(st *kubevirtv1.VirtualMachineInstanceStatus) {
		st.MigrationState.TargetNodeAddress = "10.0.0.2:8186"
	})
	env.migrationPhase(migName, kubevirtv1.MigrationTargetReady)
	env.nodeAgentStatus(name, func(st *kubevirtv1.VirtualMachineInstanceStatus) {
		now := metav1.Now()
		st.MigrationState.StartTimestamp = &now
	})
	env.migrationPhase(migName, kubevirtv1.MigrationRunning)
	env.nodeAgentStatus(name, func(st *kubevirtv1.VirtualMachineInstanceStatus) {
		now := metav1.Now()
		st.MigrationState.Completed, st.MigrationState.EndTimestamp = true, &now
		st.MigrationState.TargetNodeDomainDetected, st.MigrationState.TargetNodeDomainReadyTimestamp = true, &now
	})
	m := env.migrationPhase(migName, kubevirtv1.MigrationSucceeded)
	env.eventually("the handover", func() (bool, error) {
		v, err := env.vmi(name)
		if err != nil {
			return false, err
		}
		_, migrating := v.Labels[kubevirtv1.MigrationTargetNodeNameLabel]
		return v.Status.NodeName == "node2" && v.Labels[kubevirtv1.NodeNameLabel] == "node2" && !migrating, nil
	})
	env.eventually("the finalizer to go", func() (bool, error) {
		m, err := env.migration(migName)
		return err == nil && len(m.Finalizers) == 0, err
	})
	if m.Status.MigrationState == nil || !m.Status.MigrationState.Completed {
		t.Errorf("final migrationState not on the migration: %+v", m.Status.MigrationState)
	}
	env.printable(name, kubevirtv1.VirtualMachineStatusRunning)
	if p, err := env.kube.CoreV1().Pods(ns).Get(ctx, target.Name, metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("the target pod, now the instance's, was deleted: %v", err)
	}

	// A second migration, canceled before its target pod is scheduled: the pod goes, the
	// migration goes (its finalizer released), the guest stays on node2.
	second, err := env.admin.KubevirtV1().VirtualMachineInstanceMigrations(ns).Create(ctx, &kubevirtv1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "back", Namespace: ns}, Spec: kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: name}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	backTarget := env.targetPod(string(second.UID))
	if err := env.admin.KubevirtV1().VirtualMachineInstanceMigrations(ns).Delete(ctx, "back", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.eventually("the canceled migration to go", func() (bool, error) {
		_, err := env.migration("back")
		return apierrors.IsNotFound(err), nil
	})
	if _, err := env.kube.CoreV1().Pods(ns).Get(ctx, backTarget.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the canceled migration's target pod is still there (err %v)", err)
	}
	if v, _ := env.vmi(name); v.Status.NodeName != "node2" || v.Status.Phase != kubevirtv1.Running {
		t.Errorf("after the cancel: node %s phase %s", v.Status.NodeName, v.Status.Phase)
	}
}
