package migration

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// handedOffFixture runs m1 up to the handoff: the target pod on node-b, running.
func handedOffFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t, DefaultConfig(), newVMI(), source(), freshMig("m1", "vm1"))
	f.step("m1", createPod, writeMigration)
	tp := f.targetPods("m1-uid")[0].Name
	f.pod(tp, onNode("node-b"), computeUp())
	f.step("m1", writeVMI, writeMigration)
	f.events()
	return f, tp
}

func TestCancelBeforeTheTargetIsScheduled(t *testing.T) {
	f := newFixture(t, DefaultConfig(), newVMI(), source(), freshMig("m1", "vm1"))
	f.step("m1", createPod, writeMigration)
	f.events()
	f.deleteMig("m1")
	f.step("m1", deletePod, writeMigration, patchMigration)
	m := f.mig("m1")
	if m.Status.Phase != kubevirtv1.MigrationFailed || len(m.Finalizers) != 0 {
		t.Errorf("phase %s finalizers %v, want Failed and none", m.Status.Phase, m.Finalizers)
	}
	if c := condition(m, kubevirtv1.VirtualMachineInstanceMigrationAbortRequested); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("no abort requested condition: %+v", m.Status.Conditions)
	}
	if c := condition(m, ConditionFailed); c == nil || c.Reason != ReasonCanceled {
		t.Errorf("failed condition %+v, want reason %s", c, ReasonCanceled)
	}
	if len(f.targetPods("m1-uid")) != 0 {
		t.Error("the target pod is still there")
	}
	if f.vmi("vm1").Status.MigrationState != nil {
		t.Error("the instance got a migrationState")
	}
	if diff := cmp.Diff([]string{EventSuccessfulDelete, EventFailedMigration, EventFailedMigration}, f.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestCancelAfterTheHandoffBeforeTheTransfer(t *testing.T) {
	f, _ := handedOffFixture(t)
	f.agent("vm1", targetReady)
	f.step("m1", writeMigration)
	f.deleteMig("m1")
	f.step("m1", deletePod, writeVMI, writeMigration, patchMigration)
	if ms := f.vmi("vm1").Status.MigrationState; ms != nil {
		t.Errorf("migrationState not cleared: %+v", ms)
	}
	if m := f.mig("m1"); m.Status.Phase != kubevirtv1.MigrationFailed || len(m.Finalizers) != 0 {
		t.Errorf("phase %s finalizers %v", m.Status.Phase, m.Finalizers)
	}
	if len(f.targetPods("m1-uid")) != 0 {
		t.Error("the target pod is still there")
	}
	if f.vmi("vm1").Status.NodeName != "node-a" {
		t.Error("the instance moved")
	}
}

// TestCancelDuringTheTransfer: the controller asks the source node agent to abort and waits for
// its verdict; only then is the target pod deleted and the finalizer removed.
func TestCancelDuringTheTransfer(t *testing.T) {
	f, tp := handedOffFixture(t)
	f.agent("vm1", transferStarted)
	f.step("m1", writeMigration)
	f.deleteMig("m1")
	f.step("m1", writeVMI, writeMigration)
	if ms := f.vmi("vm1").Status.MigrationState; ms == nil || !ms.AbortRequested {
		t.Fatalf("abort not requested: %+v", ms)
	}
	m := f.mig("m1")
	if m.Status.Phase != kubevirtv1.MigrationRunning || len(m.Finalizers) != 1 {
		t.Errorf("phase %s finalizers %v, want Running and held", m.Status.Phase, m.Finalizers)
	}
	if condition(m, kubevirtv1.VirtualMachineInstanceMigrationAbortRequested) == nil {
		t.Errorf("no abort condition: %+v", m.Status.Conditions)
	}
	// Waiting: no more writes.
	f.step("m1")
	if len(f.targetPods("m1-uid")) != 1 {
		t.Fatal("target pod deleted before the source's verdict")
	}
	// The source aborted: the guest stays on the source.
	f.agent("vm1", func(ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
		ms.Completed, ms.Failed, ms.AbortStatus, ms.FailureReason = true, true, kubevirtv1.MigrationAbortSucceeded, "aborted on request"
		ms.EndTimestamp = at(time.Second)
	})
	f.step("m1", deletePod, writeMigration, patchMigration)
	m = f.mig("m1")
	if m.Status.Phase != kubevirtv1.MigrationFailed || len(m.Finalizers) != 0 {
		t.Errorf("phase %s finalizers %v", m.Status.Phase, m.Finalizers)
	}
	if c := condition(m, ConditionFailed); c == nil || !strings.Contains(c.Message, "canceled") {
		t.Errorf("failed condition %+v", c)
	}
	if vmi := f.vmi("vm1"); vmi.Status.NodeName != "node-a" || vmi.Status.MigrationState == nil || !vmi.Status.MigrationState.Failed {
		t.Errorf("instance after the abort: node %s state %+v", vmi.Status.NodeName, vmi.Status.MigrationState)
	}
	if got := f.targetPods("m1-uid"); len(got) != 0 {
		t.Errorf("target pod %s left", tp)
	}
}

func TestSourceReportsFailure(t *testing.T) {
	f, _ := handedOffFixture(t)
	f.agent("vm1", transferStarted)
	f.step("m1", writeMigration)
	f.agent("vm1", transferFailed)
	f.step("m1", deletePod, writeMigration, patchMigration)
	m := f.mig("m1")
	if m.Status.Phase != kubevirtv1.MigrationFailed || m.Status.MigrationState == nil || !m.Status.MigrationState.Failed {
		t.Errorf("phase %s state %+v", m.Status.Phase, m.Status.MigrationState)
	}
	vmi := f.vmi("vm1")
	if vmi.Status.NodeName != "node-a" || vmi.Status.MigrationState.FailureReason != "migration job failed: connection reset" {
		t.Errorf("the instance's failed migrationState must stay for the user: %+v", vmi.Status.MigrationState)
	}
	if reasons := f.eventReasons(); !cmp.Equal(reasons, []string{EventSuccessfulDelete, EventFailedMigration, EventFailedMigration}) {
		t.Errorf("events %v", reasons)
	}
}

// TestTargetPodDeletedMidway: a target pod that goes away before the transfer fails the
// migration, and the controller ends the instance's migrationState so that no agent acts on it.
func TestTargetPodDeletedMidway(t *testing.T) {
	f, tp := handedOffFixture(t)
	f.agent("vm1", targetReady)
	f.step("m1", writeMigration)
	if err := f.kube.CoreV1().Pods("default").Delete(t.Context(), tp, metaDelete()); err != nil {
		t.Fatal(err)
	}
	f.step("m1", writeVMI, writeMigration, patchMigration)
	ms := f.vmi("vm1").Status.MigrationState
	if ms == nil || !ms.Completed || !ms.Failed || ms.FailureReason == "" || ms.EndTimestamp == nil {
		t.Errorf("instance migrationState %+v, want completed and failed with a reason", ms)
	}
	if m := f.mig("m1"); m.Status.Phase != kubevirtv1.MigrationFailed {
		t.Errorf("phase %s", m.Status.Phase)
	}
}

// TestTargetPodKilledDuringTheTransfer: once the transfer runs, the source decides; the
// controller asks it to abort and reports what it says.
func TestTargetPodKilledDuringTheTransfer(t *testing.T) {
	f, tp := handedOffFixture(t)
	f.agent("vm1", transferStarted)
	f.step("m1", writeMigration)
	f.pod(tp, podPhase(corev1.PodFailed))
	f.step("m1", writeVMI)
	if ms := f.vmi("vm1").Status.MigrationState; !ms.AbortRequested || ms.Completed {
		t.Errorf("state %+v, want abort requested, not completed", ms)
	}
	f.agent("vm1", transferFailed)
	f.step("m1", deletePod, writeMigration, patchMigration)
	if m := f.mig("m1"); m.Status.Phase != kubevirtv1.MigrationFailed {
		t.Errorf("phase %s", m.Status.Phase)
	}
	if f.vmi("vm1").Status.NodeName != "node-a" {
		t.Error("the instance moved")
	}
}

func TestUnschedulableTarget(t *testing.T) {
	cfg := DefaultConfig()
	f := newFixture(t, cfg, newVMI(), source(), freshMig("m1", "vm1"))
	f.step("m1", createPod, writeMigration)
	tp := f.targetPods("m1-uid")[0].Name
	f.events()
	msg := "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
	f.pod(tp, podUnschedulable(msg))
	if requeue := f.step("m1", writeMigration); requeue != cfg.UnschedulableTimeout {
		t.Errorf("requeue %s, want %s", requeue, cfg.UnschedulableTimeout)
	}
	m := f.mig("m1")
	if c := condition(m, ConditionTargetPodUnschedulable); m.Status.Phase != kubevirtv1.MigrationScheduling || c == nil || c.Message != msg {
		t.Errorf("phase %s condition %+v", m.Status.Phase, c)
	}
	if diff := cmp.Diff([]string{EventTargetUnschedulable}, f.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// The same observation again writes nothing.
	f.now = f.now.Add(time.Minute)
	f.step("m1")
	// Past the timeout: failed, the pod deleted.
	f.now = testNow.Add(cfg.UnschedulableTimeout)
	f.step("m1", deletePod, writeMigration, patchMigration)
	m = f.mig("m1")
	if c := condition(m, ConditionFailed); m.Status.Phase != kubevirtv1.MigrationFailed || c == nil || c.Reason != ReasonTargetUnschedulable {
		t.Errorf("phase %s failed condition %+v", m.Status.Phase, c)
	}
	if condition(m, ConditionTargetPodUnschedulable) != nil {
		t.Error("the unschedulable condition stayed on a failed migration")
	}
}

// TestSecondMigrationOfAnInstance: a migration of an instance already migrating fails; one after
// a finished migration proceeds, replacing the old migrationState.
func TestSecondMigrationOfAnInstance(t *testing.T) {
	f, _ := handedOffFixture(t)
	second := freshMig("m2", "vm1")
	second.CreationTimestamp = *at(0)
	if _, err := f.kv.KubevirtV1().VirtualMachineInstanceMigrations("default").Create(t.Context(), second, metaCreate()); err != nil {
		t.Fatal(err)
	}
	f.step("m2", writeMigration, patchMigration)
	m2 := f.mig("m2")
	if c := condition(m2, ConditionFailed); m2.Status.Phase != kubevirtv1.MigrationFailed || c == nil || c.Reason != ReasonMigrationInProgress {
		t.Errorf("second migration: phase %s condition %+v", m2.Status.Phase, c)
	}
	if len(f.targetPods("m2-uid")) != 0 {
		t.Error("the second migration created a target pod")
	}
}

func metaDelete() metav1.DeleteOptions { return metav1.DeleteOptions{} }
func metaCreate() metav1.CreateOptions { return metav1.CreateOptions{} }
