package migration

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

const (
	createPod      = "create pods"
	deletePod      = "delete pods"
	writeVMI       = "update virtualmachineinstances/status"
	writeMigration = "update virtualmachineinstancemigrations/status"
	patchMigration = "patch virtualmachineinstancemigrations"
)

// TestMigrationFlow drives one migration from creation to the handover and the source pod's
// cleanup, with the node agents', the scheduler's and the kubelet's writes simulated, and
// checks every phase, the writes of each step, the instance's migrationState and the events.
func TestMigrationFlow(t *testing.T) {
	f := newFixture(t, DefaultConfig(), newVMI(), source(), freshMig("m1", "vm1"))

	// Pending → Scheduling: the target pod is created, and the phase written once.
	f.step("m1", createPod, writeMigration)
	m := f.mig("m1")
	if diff := cmp.Diff([]kubevirtv1.VirtualMachineInstanceMigrationPhase{kubevirtv1.MigrationPending, kubevirtv1.MigrationScheduling}, phases(m)); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	pods := f.targetPods(m.UID)
	if len(pods) != 1 {
		t.Fatalf("%d target pods, want 1", len(pods))
	}
	tp := pods[0]
	terms := tp.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || !cmp.Equal(terms[0].MatchExpressions, []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname,
		Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-a"}}}) {
		t.Errorf("target pod affinity %+v, want kubernetes.io/hostname NotIn [node-a]", terms)
	}
	if tp.Labels[kubevirtv1.CreatedByLabel] != "vmi-uid" || tp.OwnerReferences[0].Name != "vm1" {
		t.Errorf("target pod is not the instance's launcher pod: labels %v owners %v", tp.Labels, tp.OwnerReferences)
	}
	if diff := cmp.Diff([]string{EventSuccessfulCreate}, f.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// Unbound: nothing to write; looked at again by the pending timeout.
	if requeue := f.step("m1"); requeue != DefaultConfig().PendingTimeout {
		t.Errorf("requeue after %s, want the pending timeout", requeue)
	}

	// Bound to node-b → Scheduled: the instance's migrationState hands off to the node agents.
	f.pod(tp.Name, onNode("node-b"))
	f.step("m1", writeVMI, writeMigration)
	vmi := f.vmi("vm1")
	want := &kubevirtv1.VirtualMachineInstanceMigrationState{MigrationUID: m.UID, SourceNode: "node-a", SourcePod: "source",
		TargetNode: "node-b", TargetPod: tp.Name, Mode: kubevirtv1.MigrationPreCopy}
	if diff := cmp.Diff(want, vmi.Status.MigrationState); diff != "" {
		t.Errorf("instance migrationState (-want +got):\n%s", diff)
	}
	m = f.mig("m1")
	if m.Status.Phase != kubevirtv1.MigrationScheduled || !cmp.Equal(m.Status.MigrationState, want) {
		t.Errorf("migration: phase %s state %+v", m.Status.Phase, m.Status.MigrationState)
	}
	if vmi.Status.NodeName != "node-a" {
		t.Errorf("nodeName moved at the handoff: %s", vmi.Status.NodeName)
	}

	// The launcher runs → PreparingTarget.
	f.pod(tp.Name, computeUp())
	f.step("m1", writeMigration)
	// The target agent prepared the target → TargetReady.
	f.agent("vm1", targetReady)
	f.step("m1", writeMigration)
	// The source agent starts the transfer → Running.
	f.agent("vm1", func(ms *kubevirtv1.VirtualMachineInstanceMigrationState) { ms.StartTimestamp = at(0) })
	f.step("m1", writeMigration)
	if got := f.mig("m1").Status.Phase; got != kubevirtv1.MigrationRunning {
		t.Fatalf("phase %s, want Running", got)
	}
	// Completed on the source: nothing until the target sees the guest.
	f.agent("vm1", func(ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
		ms.Completed, ms.EndTimestamp = true, at(time.Second)
	})
	f.step("m1")
	f.events()

	// The target sees the guest running → handover and Succeeded; the finalizer goes.
	f.agent("vm1", domainDetected)
	requeue := f.step("m1", writeVMI, writeMigration, patchMigration)
	vmi = f.vmi("vm1")
	if vmi.Status.NodeName != "node-b" {
		t.Errorf("nodeName after the handover: %s, want node-b", vmi.Status.NodeName)
	}
	m = f.mig("m1")
	wantPhases := []kubevirtv1.VirtualMachineInstanceMigrationPhase{kubevirtv1.MigrationPending, kubevirtv1.MigrationScheduling,
		kubevirtv1.MigrationScheduled, kubevirtv1.MigrationPreparingTarget, kubevirtv1.MigrationTargetReady, kubevirtv1.MigrationRunning,
		kubevirtv1.MigrationSucceeded}
	if diff := cmp.Diff(wantPhases, phases(m)); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if m.Status.MigrationState == nil || !m.Status.MigrationState.Completed || !m.Status.MigrationState.TargetNodeDomainDetected {
		t.Errorf("final migrationState not copied: %+v", m.Status.MigrationState)
	}
	if len(m.Finalizers) != 0 {
		t.Errorf("finalizers after success: %v", m.Finalizers)
	}
	if diff := cmp.Diff([]string{EventMigrated, EventSuccessfulMigration}, f.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if requeue != 0 {
		t.Errorf("requeue %s right after the handover", requeue)
	}

	// The source launcher lingers: it gets SourcePodLinger, then it is deleted. The target pod stays.
	if requeue := f.step("m1"); requeue != DefaultConfig().SourcePodLinger {
		t.Errorf("requeue %s, want the linger %s", requeue, DefaultConfig().SourcePodLinger)
	}
	f.now = f.now.Add(DefaultConfig().SourcePodLinger)
	f.step("m1", deletePod)
	if len(f.targetPods(m.UID)) != 1 {
		t.Error("the target pod (now the instance's pod) was deleted")
	}
	f.step("m1")
}

// TestRestartRecoversFromObjects: a new controller (a restart, or the other replica taking the
// lease) picks every migration up where the objects say it is, without a second target pod.
func TestRestartRecoversFromObjects(t *testing.T) {
	f := newFixture(t, DefaultConfig(), newVMI(), source(), freshMig("m1", "vm1"))
	f.step("m1", createPod, writeMigration)
	tp := f.targetPods("m1-uid")[0]

	// The controller goes away; meanwhile the pod is bound and the agents move on.
	f.pod(tp.Name, onNode("node-b"), computeUp())
	g := newFixture(t, DefaultConfig(), f.vmi("vm1"), f.mig("m1"), source(), f.targetPodPtr(tp.Name))
	g.step("m1", writeVMI, writeMigration)
	if got := g.mig("m1"); got.Status.Phase != kubevirtv1.MigrationPreparingTarget {
		t.Errorf("after the restart: phase %s, want PreparingTarget", got.Status.Phase)
	}

	// Again, with the transfer done while no controller watched: straight to Succeeded.
	g.agent("vm1", func(ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
		targetReady(ms)
		ms.StartTimestamp, ms.Completed, ms.EndTimestamp = at(0), true, at(time.Second)
		domainDetected(ms)
	})
	h := newFixture(t, DefaultConfig(), g.vmi("vm1"), g.mig("m1"), source(), g.targetPodPtr(tp.Name))
	h.step("m1", writeVMI, writeMigration, patchMigration)
	m := h.mig("m1")
	if diff := cmp.Diff([]kubevirtv1.VirtualMachineInstanceMigrationPhase{kubevirtv1.MigrationPending, kubevirtv1.MigrationScheduling,
		kubevirtv1.MigrationScheduled, kubevirtv1.MigrationPreparingTarget, kubevirtv1.MigrationTargetReady, kubevirtv1.MigrationRunning,
		kubevirtv1.MigrationSucceeded}, phases(m)); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if h.vmi("vm1").Status.NodeName != "node-b" {
		t.Errorf("no handover after the restart")
	}
	if n := len(h.targetPods("m1-uid")); n != 1 {
		t.Errorf("%d target pods after the restarts, want 1", n)
	}
}

// TestWaitsForItsOwnWrites: until the caches show the controller's last writes, a sync makes
// none (it would act on stale objects: a second target pod, a conflicting status write).
func TestWaitsForItsOwnWrites(t *testing.T) {
	f := newFixture(t, DefaultConfig(), newVMI(), source(), freshMig("m1", "vm1"))
	f.step("m1", createPod, writeMigration)
	// Not observed yet: no second pod, no write.
	if got, _ := f.sync("m1"); len(got) != 0 {
		t.Fatalf("sync before the caches caught up wrote %v", got)
	}
	tp := f.targetPods("m1-uid")[0]
	f.pod(tp.Name, onNode("node-b"))
	f.step("m1", writeVMI, writeMigration)
	// The migration's new status reached the cache, the instance's new migrationState not yet:
	// no second handoff.
	m := f.mig("m1")
	old, _, _ := f.migInf.GetIndexer().GetByKey("default/m1")
	_ = f.migInf.GetIndexer().Update(m)
	f.c.migrationUpdated(old, m)
	if got, _ := f.sync("m1"); len(got) != 0 {
		t.Errorf("sync with a stale instance wrote %v", got)
	}
	// Once it did, the migration moves on (nothing to write: the pod is not running yet).
	f.step("m1")
	if got := f.mig("m1").Status.Phase; got != kubevirtv1.MigrationScheduled {
		t.Errorf("phase %s", got)
	}
}

func (f *fixture) targetPodPtr(name string) *corev1.Pod {
	f.t.Helper()
	for _, p := range f.targetPods(types.UID("m1-uid")) {
		if p.Name == name {
			return p.DeepCopy()
		}
	}
	f.t.Fatalf("no target pod %s", name)
	return nil
}

var _ = cmpopts.EquateEmpty
