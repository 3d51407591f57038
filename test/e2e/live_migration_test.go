package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/migration"
)

// migrationTimeout bounds a migration from its creation to its end (target pod start under
// QEMU TCG included).
const migrationTimeout = 4 * time.Minute

// TestLiveMigration moves a running 256 MiB guest between the two nodes of the cluster with
// `nativevirt migrate` while it prints a counter with its uptime on the serial console every
// 100 ms: the migration goes through KubeVirt's phases to Succeeded, the instance reports the
// other node, the counter goes on without a restart, the source launcher pod ends and the
// console works on the new node. Then, with the guest's migration bandwidth capped at 1 MiB/s,
// a migration cancelled by `nativevirt migrate-cancel` while it runs, and one whose target
// launcher pod is force-deleted while it runs, both leave the guest running where it was.
// It needs a cluster of two nodes or more (NV_NODES=2).
func TestLiveMigration(t *testing.T) {
	requireNodes(t, 2)
	e := newCtrlEnv(t, "e2e-livemig")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, e.migratingVM(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi, source := f.running(demoVM, "")
	rec := newTickRecorder()
	defer rec.close()
	rec.follow(f, source)
	rec.waitTicks(f, source.Name, 10)
	f.waitFor("LiveMigratable=True", controllerTimeout, func() (bool, error) {
		s, err := f.condition(demoVM, kubevirtv1.VirtualMachineInstanceIsMigratable)
		return s == corev1.ConditionTrue, err
	})
	mw := f.watchMigrations()
	bridgeMAC := podBridgeMAC(t)

	target := f.migrateHappyPath(mw, rec, vmi, source)
	f.consoleCheck(demoVM)

	// The transfers below run at 1 MiB/s: they take minutes unless cancelled or broken.
	f.throttleMigrations(target, demoVM, 1)
	earlier := map[types.UID]bool{}
	for _, m := range f.migrations() {
		earlier[m.UID] = true
	}
	cancelled := f.migrateCancelled(mw, rec, vmi.UID, target, earlier)
	earlier[cancelled] = true
	f.migrateTargetKilled(mw, rec, vmi.UID, target, earlier)
	f.consoleCheck(demoVM)
	// The pods' gateway (and the nodes' addresses) keep their MAC while launcher pods come and go.
	if got := podBridgeMAC(t); got != bridgeMAC {
		t.Errorf("the pod bridge's MAC changed from %s to %s with the launcher pods: pods' neighbour entries for the nodes went stale", bridgeMAC, got)
	}
}

// podBridgeMAC is the MAC of the pods' bridge (hack/cluster: nv0), which must be set, not
// inherited from its ports (/sys/class/net/*/addr_assign_type 3, NET_ADDR_SET).
func podBridgeMAC(t *testing.T) string {
	t.Helper()
	mac, err := os.ReadFile("/sys/class/net/nv0/address")
	if err != nil {
		t.Fatal(err)
	}
	typ, err := os.ReadFile("/sys/class/net/nv0/addr_assign_type")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(typ)) != "3" {
		t.Errorf("bridge nv0's MAC %s has addr_assign_type %s, want 3 (set): an inherited MAC changes with the pods' veths",
			strings.TrimSpace(string(mac)), strings.TrimSpace(string(typ)))
	}
	return strings.TrimSpace(string(mac))
}

// migrateHappyPath migrates the guest of vmi from its pod source to the other node and checks
// the outcome; it returns the target pod, the instance's pod from then on.
func (f *flow) migrateHappyPath(mw *migrationWatch, rec *tickRecorder, vmi *kubevirtv1.VirtualMachineInstance, source *corev1.Pod) *corev1.Pod {
	t := f.t
	t.Helper()
	ctx := context.Background()
	started := time.Now()
	f.cli.run("migrate", demoVM)
	m := f.migrationOf(demoVM, nil)
	target := f.targetPod(m.UID, true)
	rec.follow(f, target)
	m = f.migrationPhase(m.Name, migrationTimeout, kubevirtv1.MigrationSucceeded)
	took := time.Since(started)
	f.logMigration(m)
	f.showWide("after the migration")
	mw.checkOrder(t, m.UID, kubevirtv1.MigrationSucceeded, kubevirtv1.MigrationScheduling, kubevirtv1.MigrationRunning)
	checkTransitionTimestamps(t, m)

	from, to := source.Spec.NodeName, target.Spec.NodeName
	if to == from || to == "" {
		t.Fatalf("target pod %s on node %q, source pod %s on %q: want another node", target.Name, to, source.Name, from)
	}
	v, err := f.vmi(demoVM)
	if err != nil {
		t.Fatal(err)
	}
	if v.UID != vmi.UID {
		t.Fatalf("instance %s replaced by %s", vmi.UID, v.UID)
	}
	if v.Status.NodeName != to || v.Labels[kubevirtv1.NodeNameLabel] != to {
		t.Errorf("instance after the migration: status.nodeName %q, label %s=%q; want %s", v.Status.NodeName, kubevirtv1.NodeNameLabel, v.Labels[kubevirtv1.NodeNameLabel], to)
	}
	if l, ok := v.Labels[kubevirtv1.MigrationTargetNodeNameLabel]; ok {
		t.Errorf("label %s=%q still on the instance after the migration", kubevirtv1.MigrationTargetNodeNameLabel, l)
	}
	if v.Status.Phase != kubevirtv1.Running {
		t.Errorf("instance phase %s after the migration, want Running", v.Status.Phase)
	}
	ms := v.Status.MigrationState
	if ms == nil || ms.MigrationUID != m.UID || !ms.Completed || ms.Failed || ms.SourceNode != from || ms.TargetNode != to ||
		ms.SourcePod != source.Name || ms.TargetPod != target.Name || !ms.TargetNodeDomainDetected || ms.StartTimestamp == nil || ms.EndTimestamp == nil {
		t.Errorf("instance migrationState %+v: want completed, not failed, %s/%s → %s/%s of migration %s, target domain detected, start and end", ms, from, source.Name, to, target.Name, m.UID)
	}

	// The source launcher exits once its domain left; the target pod is the instance's pod.
	f.waitFor("source pod "+source.Name+" Succeeded, target pod "+target.Name+" the only active pod", controllerTimeout, func() (bool, error) {
		p, err := f.kube.CoreV1().Pods(f.ns).Get(ctx, source.Name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("source pod: %v", err)
		}
		if p.Status.Phase != corev1.PodSucceeded {
			return false, fmt.Errorf("source pod %s", p.Status.Phase)
		}
		tp, err := f.kube.CoreV1().Pods(f.ns).Get(ctx, target.Name, metav1.GetOptions{})
		if err != nil || tp.Status.Phase != corev1.PodRunning {
			return false, fmt.Errorf("target pod %v (%v)", tp.Status.Phase, err)
		}
		v, err := f.vmi(demoVM)
		if err != nil {
			return false, err
		}
		if len(v.Status.ActivePods) != 1 || v.Status.ActivePods[target.UID] != to {
			return false, fmt.Errorf("activePods %v", v.Status.ActivePods)
		}
		return true, nil
	})
	f.showWide("source launcher ended")

	// The counter goes on in the target pod, without a restart.
	rec.waitTicks(f, target.Name, 20)
	gap, where := rec.continuity(t)
	ticks, _ := rec.snapshot()
	onTarget := 0
	for _, tk := range ticks {
		if tk.pod == target.Name {
			onTarget++
		}
	}
	if onTarget == 0 {
		t.Errorf("no counter line in the serial log of the target pod %s", target.Name)
	}
	stateTook := time.Duration(0)
	if ms != nil && ms.StartTimestamp != nil && ms.EndTimestamp != nil {
		stateTook = ms.EndTimestamp.Sub(ms.StartTimestamp.Time)
	}
	t.Logf("MIGRATION %s → %s of a 256 MiB guest: `nativevirt migrate` → Succeeded %s; watched: created → Succeeded %s, Running → Succeeded %s; migrationState start → end %s (1 s resolution)",
		from, to, took.Round(10*time.Millisecond), mw.between(m.UID, "created", kubevirtv1.MigrationSucceeded).Round(10*time.Millisecond),
		mw.between(m.UID, kubevirtv1.MigrationRunning, kubevirtv1.MigrationSucceeded).Round(10*time.Millisecond), stateTook)
	t.Logf("DOWNTIME: largest gap between consecutive counter lines %s (100 ms period, 20 ms polling): %s; %d lines recorded, %d on the target",
		gap.Round(time.Millisecond), where, len(ticks), onTarget)
	return target
}

// migrateCancelled starts a (throttled) migration of the guest in pod source, cancels it with
// `nativevirt migrate-cancel` once it runs and checks that the guest stayed; it returns the
// migration's UID.
func (f *flow) migrateCancelled(mw *migrationWatch, rec *tickRecorder, vmiUID types.UID, source *corev1.Pod, earlier map[types.UID]bool) types.UID {
	t := f.t
	t.Helper()
	ctx := context.Background()
	f.cli.run("migrate", demoVM)
	m := f.migrationOf(demoVM, earlier)
	target := f.targetPod(m.UID, true)
	f.migrationPhase(m.Name, migrationTimeout, kubevirtv1.MigrationRunning)
	rec.waitTicks(f, source.Name, 5)
	f.showWide("migration running")
	cancelled := time.Now()
	f.cli.run("migrate-cancel", demoVM)
	f.waitFor("the cancelled migration and its target pod gone", controllerTimeout, func() (bool, error) {
		if _, err := f.kv.KubevirtV1().VirtualMachineInstanceMigrations(f.ns).Get(ctx, m.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("migration still there (%v)", err)
		}
		if _, err := f.kube.CoreV1().Pods(f.ns).Get(ctx, target.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("target pod still there (%v)", err)
		}
		return true, nil
	})
	t.Logf("CANCEL: `nativevirt migrate-cancel` → migration and target pod gone in %s", time.Since(cancelled).Round(10*time.Millisecond))
	mw.checkOrder(t, m.UID, mw.last(m.UID), kubevirtv1.MigrationRunning)
	events, _ := f.c.Kubectl("get", "events", "-n", f.ns, "--field-selector", "involvedObject.name="+m.Name,
		"-o", "custom-columns=REASON:.reason,MESSAGE:.message", "--sort-by=.lastTimestamp")
	t.Logf("events of the cancelled migration:\n%s", events)
	if !strings.Contains(events, migration.EventSuccessfulAbort) || !strings.Contains(events, "Migration canceled") {
		t.Errorf("events of the cancelled migration: want %s and \"Migration canceled\"", migration.EventSuccessfulAbort)
	}
	f.stayed(rec, vmiUID, source, m.UID, true)
	return m.UID
}

// migrateTargetKilled starts a (throttled) migration of the guest in pod source, force-deletes
// its target launcher pod while it runs and checks that the migration failed and the guest
// stayed.
func (f *flow) migrateTargetKilled(mw *migrationWatch, rec *tickRecorder, vmiUID types.UID, source *corev1.Pod, earlier map[types.UID]bool) {
	t := f.t
	t.Helper()
	f.cli.run("migrate", demoVM)
	m := f.migrationOf(demoVM, earlier)
	target := f.targetPod(m.UID, true)
	f.migrationPhase(m.Name, migrationTimeout, kubevirtv1.MigrationRunning)
	rec.waitTicks(f, source.Name, 5)
	killed := time.Now()
	out, err := f.c.Kubectl("delete", "pod", "-n", f.ns, target.Name, "--grace-period=0", "--force")
	t.Logf("$ kubectl delete pod %s --grace-period=0 --force\n%s", target.Name, out)
	if err != nil {
		t.Fatal(err)
	}
	m = f.migrationPhase(m.Name, controllerTimeout, kubevirtv1.MigrationFailed)
	t.Logf("TARGET KILLED: target pod deleted → migration Failed in %s", time.Since(killed).Round(10*time.Millisecond))
	f.logMigration(m)
	mw.checkOrder(t, m.UID, kubevirtv1.MigrationFailed, kubevirtv1.MigrationRunning)
	if s := m.Status.MigrationState; s == nil || !s.Completed || !s.Failed || s.FailureReason == "" {
		t.Errorf("failed migration's state %+v: want completed, failed, with a reason", s)
	}
	// Either the source agent saw its tunnel break, or the controller saw the pod go first and
	// had the transfer aborted: not a cancel either way.
	var failed *kubevirtv1.VirtualMachineInstanceMigrationCondition
	for i, c := range m.Status.Conditions {
		if c.Type == migration.ConditionFailed {
			failed = &m.Status.Conditions[i]
		}
	}
	if failed == nil || (failed.Reason != migration.ReasonTargetDown && failed.Reason != migration.ReasonSourceFailed) ||
		strings.Contains(strings.ToLower(failed.Message), "cancel") {
		t.Errorf("migration condition %s: %+v, want reason %s or %s, not a cancel", migration.ConditionFailed, failed, migration.ReasonTargetDown, migration.ReasonSourceFailed)
	} else {
		t.Logf("migration condition %s: %s: %s", failed.Type, failed.Reason, failed.Message)
	}
	f.stayed(rec, vmiUID, source, m.UID, false)
}

// stayed checks that after the failed or cancelled migration uid the guest still runs in its pod
// source, counting on without a restart, and that no other launcher pod is left.
func (f *flow) stayed(rec *tickRecorder, vmiUID types.UID, source *corev1.Pod, uid types.UID, aborted bool) {
	t := f.t
	t.Helper()
	// The launcher pod of an earlier migration's source may remain (Succeeded): the instance's
	// pods that run are the source alone.
	var v *kubevirtv1.VirtualMachineInstance
	f.waitFor("instance "+demoVM+" Running in pod "+source.Name+" alone", controllerTimeout, func() (bool, error) {
		var err error
		if v, err = f.vmi(demoVM); err != nil || v.Status.Phase != kubevirtv1.Running {
			return false, fmt.Errorf("instance: %v (%v)", phaseOf(v), err)
		}
		pods, err := f.launcherPods(v.UID)
		if err != nil {
			return false, err
		}
		var running []string
		for _, p := range pods {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				running = append(running, p.Name+"/"+string(p.Status.Phase))
			}
		}
		if len(running) != 1 || running[0] != source.Name+"/"+string(corev1.PodRunning) {
			return false, fmt.Errorf("launcher pods not ended: %v", running)
		}
		return true, nil
	})
	f.showWide("after the failed migration")
	if v.UID != vmiUID || v.Status.NodeName != source.Spec.NodeName || v.Labels[kubevirtv1.NodeNameLabel] != source.Spec.NodeName ||
		len(v.Status.ActivePods) != 1 || v.Status.ActivePods[source.UID] != source.Spec.NodeName {
		t.Errorf("after the failed migration: instance %s on %q (label %q), activePods %v; want %s on %s with pod %s",
			v.UID, v.Status.NodeName, v.Labels[kubevirtv1.NodeNameLabel], v.Status.ActivePods, vmiUID, source.Spec.NodeName, source.Name)
	}
	if l, ok := v.Labels[kubevirtv1.MigrationTargetNodeNameLabel]; ok {
		t.Errorf("label %s=%q still on the instance after the failed migration", kubevirtv1.MigrationTargetNodeNameLabel, l)
	}
	ms := v.Status.MigrationState
	if ms == nil || ms.MigrationUID != uid || !ms.Completed || !ms.Failed {
		t.Errorf("instance migrationState %+v: want migration %s completed and failed", ms, uid)
	} else if aborted && (!ms.AbortRequested || ms.AbortStatus != kubevirtv1.MigrationAbortSucceeded) {
		t.Errorf("cancelled migration: abortRequested %t abortStatus %q, want true and %s", ms.AbortRequested, ms.AbortStatus, kubevirtv1.MigrationAbortSucceeded)
	}
	if ms != nil {
		t.Logf("instance migrationState: completed %t failed %t abortRequested %t abortStatus %q reason %q",
			ms.Completed, ms.Failed, ms.AbortRequested, ms.AbortStatus, ms.FailureReason)
	}
	rec.waitTicks(f, source.Name, 10)
	gap, where := rec.continuity(t)
	t.Logf("counter on %s went on; largest gap so far %s (%s)", source.Name, gap.Round(time.Millisecond), where)
}

// targetPod waits for the target launcher pod of migration uid (bound to a node when bound).
func (f *flow) targetPod(uid types.UID, bound bool) *corev1.Pod {
	f.t.Helper()
	var pod *corev1.Pod
	f.waitFor("the target pod of migration "+string(uid), controllerTimeout, func() (bool, error) {
		pods, err := f.kube.CoreV1().Pods(f.ns).List(context.Background(), metav1.ListOptions{LabelSelector: kubevirtv1.MigrationJobLabel + "=" + string(uid)})
		if err != nil || len(pods.Items) != 1 {
			return false, fmt.Errorf("%d target pods (%v)", len(pods.Items), err)
		}
		if bound && pods.Items[0].Spec.NodeName == "" {
			return false, fmt.Errorf("target pod %s not bound", pods.Items[0].Name)
		}
		pod = &pods.Items[0]
		return true, nil
	})
	return pod
}

func (f *flow) migrations() []kubevirtv1.VirtualMachineInstanceMigration {
	f.t.Helper()
	list, err := f.kv.KubevirtV1().VirtualMachineInstanceMigrations(f.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

// checkTransitionTimestamps checks that the migration's recorded phase transitions follow
// KubeVirt's order in time.
func checkTransitionTimestamps(t *testing.T, m *kubevirtv1.VirtualMachineInstanceMigration) {
	t.Helper()
	ts := m.Status.PhaseTransitionTimestamps
	for i := 1; i < len(ts); i++ {
		if phaseIndex(ts[i].Phase) <= phaseIndex(ts[i-1].Phase) || ts[i].PhaseTransitionTimestamp.Before(&ts[i-1].PhaseTransitionTimestamp) {
			t.Errorf("phase transitions out of order: %+v", ts)
			return
		}
	}
}
