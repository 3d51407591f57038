package e2e

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

// counterUserData starts a counter on the serial console: a line with the guest's uptime every
// 100 ms, numbered from 1 at boot (a second boot would start again at 1).
var counterUserData = framework.CounterUserData(100 * time.Millisecond)

// migrationPhases is the order of a migration's phases (KubeVirt's names).
var migrationPhases = []kubevirtv1.VirtualMachineInstanceMigrationPhase{
	kubevirtv1.MigrationPending, kubevirtv1.MigrationScheduling, kubevirtv1.MigrationScheduled,
	kubevirtv1.MigrationPreparingTarget, kubevirtv1.MigrationTargetReady, kubevirtv1.MigrationRunning,
	kubevirtv1.MigrationSucceeded, kubevirtv1.MigrationFailed,
}

func phaseIndex(p kubevirtv1.VirtualMachineInstanceMigrationPhase) int {
	for i, q := range migrationPhases {
		if q == p {
			return i
		}
	}
	return -1
}

// tick is one counter line of the guest, with the host time the test read it at.
type tick struct {
	framework.Tick
	seen time.Time
	pod  string
}

// tickRecorder reads the serial logs of launcher pods every 20 ms (from the host, through the
// kubelet's pod directories) and records each new counter line with the time it appeared.
type tickRecorder struct {
	mu    sync.Mutex
	logs  map[string]*serialLog // by pod name
	ticks []tick
	stop  chan struct{}
	done  chan struct{}
}

type serialLog struct {
	framework.SerialLog
	boots int
}

func newTickRecorder() *tickRecorder {
	r := &tickRecorder{logs: map[string]*serialLog{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				r.poll()
			}
		}
	}()
	return r
}

// follow starts reading the serial log of pod (from its beginning).
func (r *tickRecorder) follow(f *flow, pod *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.logs[pod.Name]; !ok {
		r.logs[pod.Name] = &serialLog{SerialLog: framework.SerialLog{Path: f.c.SerialLogPath(pod)}}
	}
}

func (r *tickRecorder) poll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	names := make([]string, 0, len(r.logs))
	for name := range r.logs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		l := r.logs[name]
		ticks, boots, err := l.Read()
		if err != nil {
			continue
		}
		l.boots += boots
		for _, tk := range ticks {
			r.ticks = append(r.ticks, tick{Tick: tk, seen: now, pod: name})
		}
	}
}

func (r *tickRecorder) close() {
	close(r.stop)
	<-r.done
}

// snapshot is the ticks recorded so far and the guest boots seen per pod.
func (r *tickRecorder) snapshot() ([]tick, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	boots := map[string]int{}
	for name, l := range r.logs {
		boots[name] = l.boots
	}
	ticks := append([]tick(nil), r.ticks...)
	// One poll may read lines of two logs (the source's last and the target's first): in the
	// order of the counter within a poll.
	sort.SliceStable(ticks, func(i, j int) bool {
		if !ticks[i].seen.Equal(ticks[j].seen) {
			return ticks[i].seen.Before(ticks[j].seen)
		}
		return ticks[i].N < ticks[j].N
	})
	return ticks, boots
}

// waitTicks waits until pod has printed n more ticks than it had when called.
func (r *tickRecorder) waitTicks(f *flow, pod string, n int) {
	f.t.Helper()
	count := func() int {
		ts, _ := r.snapshot()
		c := 0
		for _, t := range ts {
			if t.pod == pod {
				c++
			}
		}
		return c
	}
	base := count()
	f.waitFor(fmt.Sprintf("%d more counter lines on the console of pod %s", n, pod), time.Minute, func() (bool, error) {
		c := count()
		return c >= base+n, fmt.Errorf("%d new lines", c-base)
	})
}

// continuity checks that the counter went on without a restart over everything recorded: tick
// numbers and guest uptimes grow, no tick number repeats or goes back, the guest booted once; it
// returns the largest host-time gap between consecutive ticks (the guest's downtime as the
// console shows it, rounded up to the 100 ms period and the 20 ms polling) and where it was.
func (r *tickRecorder) continuity(t *testing.T) (time.Duration, string) {
	t.Helper()
	ticks, boots := r.snapshot()
	if len(ticks) < 2 {
		t.Fatalf("%d counter lines recorded", len(ticks))
	}
	total := 0
	for pod, b := range boots {
		total += b
		if b > 0 {
			t.Logf("serial log of %s: %d boot banners", pod, b)
		}
	}
	if total > 1 {
		t.Errorf("the guest booted %d times in the recorded serial logs, want once", total)
	}
	var gap time.Duration
	where := ""
	for i := 1; i < len(ticks); i++ {
		a, b := ticks[i-1], ticks[i]
		if b.N <= a.N || b.Uptime < a.Uptime {
			t.Errorf("counter went back: %+v then %+v (a restart or a second running copy)", a, b)
		}
		if b.N != a.N+1 {
			t.Logf("counter lines %d..%d missing (%s → %s)", a.N+1, b.N-1, a.pod, b.pod)
		}
		if d := b.seen.Sub(a.seen); d > gap {
			gap = d
			where = fmt.Sprintf("tick %d (uptime %.2f, pod %s) → tick %d (uptime %.2f, pod %s)", a.N, a.Uptime, a.pod, b.N, b.Uptime, b.pod)
		}
	}
	return gap, where
}

// migrationWatch records the phases of the migrations of one namespace as a watch delivers them.
type migrationWatch struct {
	mu     sync.Mutex
	phases map[types.UID][]kubevirtv1.VirtualMachineInstanceMigrationPhase
	// at is when the watch delivered each phase first, and "created" the migration.
	at   map[types.UID]map[kubevirtv1.VirtualMachineInstanceMigrationPhase]time.Time
	w    watch.Interface
	done chan struct{}
}

func (f *flow) watchMigrations() *migrationWatch {
	f.t.Helper()
	w, err := f.kv.KubevirtV1().VirtualMachineInstanceMigrations(f.ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	mw := &migrationWatch{phases: map[types.UID][]kubevirtv1.VirtualMachineInstanceMigrationPhase{},
		at: map[types.UID]map[kubevirtv1.VirtualMachineInstanceMigrationPhase]time.Time{}, w: w, done: make(chan struct{})}
	go func() {
		defer close(mw.done)
		for ev := range w.ResultChan() {
			m, ok := ev.Object.(*kubevirtv1.VirtualMachineInstanceMigration)
			if !ok {
				continue
			}
			mw.mu.Lock()
			at := mw.at[m.UID]
			if at == nil {
				at = map[kubevirtv1.VirtualMachineInstanceMigrationPhase]time.Time{"created": time.Now()}
				mw.at[m.UID] = at
			}
			ps := mw.phases[m.UID]
			if p := m.Status.Phase; p != "" && (len(ps) == 0 || ps[len(ps)-1] != p) {
				mw.phases[m.UID] = append(ps, p)
				if _, ok := at[p]; !ok {
					at[p] = time.Now()
				}
			}
			mw.mu.Unlock()
		}
	}()
	f.t.Cleanup(func() {
		w.Stop()
		<-mw.done
	})
	return mw
}

func (mw *migrationWatch) seen(uid types.UID) []kubevirtv1.VirtualMachineInstanceMigrationPhase {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	return append([]kubevirtv1.VirtualMachineInstanceMigrationPhase(nil), mw.phases[uid]...)
}

// between is the time between the watch's first sight of phases from and to (0 when unseen).
func (mw *migrationWatch) between(uid types.UID, from, to kubevirtv1.VirtualMachineInstanceMigrationPhase) time.Duration {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	a, okA := mw.at[uid][from]
	b, okB := mw.at[uid][to]
	if !okA || !okB {
		return 0
	}
	return b.Sub(a)
}

// checkOrder fails the test unless the phases watched for the migration advanced in KubeVirt's
// order, ended in final and passed through every phase in must.
func (mw *migrationWatch) checkOrder(t *testing.T, uid types.UID, final kubevirtv1.VirtualMachineInstanceMigrationPhase, must ...kubevirtv1.VirtualMachineInstanceMigrationPhase) {
	t.Helper()
	ps := mw.seen(uid)
	t.Logf("migration %s: phases watched: %v", uid, ps)
	for i := 1; i < len(ps); i++ {
		if phaseIndex(ps[i]) <= phaseIndex(ps[i-1]) {
			t.Errorf("migration phases out of order: %v", ps)
			break
		}
	}
	if len(ps) == 0 || ps[len(ps)-1] != final {
		t.Errorf("migration phases %v, want them to end in %s", ps, final)
	}
	for _, p := range must {
		found := false
		for _, q := range ps {
			found = found || q == p
		}
		if !found {
			t.Errorf("migration phases %v: no %s", ps, p)
		}
	}
}

// migrationOf waits for a migration of vmName that is not one of the earlier ones and returns it.
func (f *flow) migrationOf(vmName string, earlier map[types.UID]bool) *kubevirtv1.VirtualMachineInstanceMigration {
	f.t.Helper()
	var m *kubevirtv1.VirtualMachineInstanceMigration
	f.waitFor("the migration of "+vmName, controllerTimeout, func() (bool, error) {
		list, err := f.kv.KubevirtV1().VirtualMachineInstanceMigrations(f.ns).List(context.Background(), metav1.ListOptions{
			LabelSelector: kubevirtv1.MigrationSelectorLabel + "=" + vmName})
		if err != nil {
			return false, err
		}
		for i := range list.Items {
			if !earlier[list.Items[i].UID] {
				m = &list.Items[i]
				return true, nil
			}
		}
		return false, fmt.Errorf("%d migrations, none new", len(list.Items))
	})
	return m
}

// migrationPhase waits until the migration named name is in one of phases and returns it.
func (f *flow) migrationPhase(name string, timeout time.Duration, phases ...kubevirtv1.VirtualMachineInstanceMigrationPhase) *kubevirtv1.VirtualMachineInstanceMigration {
	f.t.Helper()
	wantFailed := false
	for _, p := range phases {
		wantFailed = wantFailed || p == kubevirtv1.MigrationFailed
	}
	var m *kubevirtv1.VirtualMachineInstanceMigration
	f.waitFor(fmt.Sprintf("migration %s in phase %v", name, phases), timeout, func() (bool, error) {
		got, err := f.kv.KubevirtV1().VirtualMachineInstanceMigrations(f.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range phases {
			if got.Status.Phase == p {
				m = got
				return true, nil
			}
		}
		if got.Status.Phase == kubevirtv1.MigrationFailed && !wantFailed {
			f.logMigration(got)
			f.dump()
			f.t.Fatalf("migration %s Failed: %+v", name, got.Status.MigrationState)
		}
		return false, fmt.Errorf("phase %s", got.Status.Phase)
	})
	return m
}

// logMigration logs `kubectl get vmim` and the migration's phase timestamps.
func (f *flow) logMigration(m *kubevirtv1.VirtualMachineInstanceMigration) {
	out, _ := f.c.Kubectl("get", "vmim", "-n", f.ns)
	f.t.Logf("$ kubectl get vmim\n%s", out)
	var b strings.Builder
	for _, ts := range m.Status.PhaseTransitionTimestamps {
		fmt.Fprintf(&b, " %s@%s", ts.Phase, ts.PhaseTransitionTimestamp.Format("15:04:05"))
	}
	f.t.Logf("migration %s phase transitions:%s", m.Name, b.String())
	if s := m.Status.MigrationState; s != nil {
		f.t.Logf("migration %s state: %s → %s (pods %s → %s), completed %t failed %t abortRequested %t abortStatus %q reason %q",
			m.Name, s.SourceNode, s.TargetNode, s.SourcePod, s.TargetPod, s.Completed, s.Failed, s.AbortRequested, s.AbortStatus, s.FailureReason)
	}
}

// migratingVM is the demo VM with a 256 MiB guest that counts on its console.
func (e *ctrlEnv) migratingVM() *kubevirtv1.VirtualMachine {
	vm := e.demoVM(kubevirtv1.RunStrategyAlways)
	q := resource.MustParse("256Mi")
	vm.Spec.Template.Spec.Domain.Memory.Guest = &q
	for i := range vm.Spec.Template.Spec.Volumes {
		if ci := vm.Spec.Template.Spec.Volumes[i].CloudInitNoCloud; ci != nil {
			ci.UserData = counterUserData
		}
	}
	return vm
}

// throttleMigrations caps the migration bandwidth of the guest in pod (`virsh migrate-setspeed`
// on the launcher's libvirtd, what the node agent's --migration-bandwidth-mib passes per
// migration): a transfer then lasts long enough to be cancelled or broken mid-way.
func (f *flow) throttleMigrations(pod *corev1.Pod, vmiName string, mib int) {
	f.t.Helper()
	domain := convert.DomainName(f.ns, vmiName)
	uri := "qemu+unix:///system?socket=" + launcherpod.LibvirtSocket
	out, err := f.c.Kubectl("exec", "-n", f.ns, pod.Name, "-c", launcherpod.ComputeContainerName, "--",
		"virsh", "-c", uri, "migrate-setspeed", domain, strconv.Itoa(mib))
	if err != nil {
		f.t.Fatalf("virsh migrate-setspeed in %s: %v\n%s", pod.Name, err, out)
	}
	out, _ = f.c.Kubectl("exec", "-n", f.ns, pod.Name, "-c", launcherpod.ComputeContainerName, "--",
		"virsh", "-c", uri, "migrate-getspeed", domain)
	f.t.Logf("migration bandwidth of %s in %s: %s MiB/s", domain, pod.Name, strings.TrimSpace(out))
}

// last is the latest phase the watch delivered for the migration.
func (mw *migrationWatch) last(uid types.UID) kubevirtv1.VirtualMachineInstanceMigrationPhase {
	ps := mw.seen(uid)
	if len(ps) == 0 {
		return ""
	}
	return ps[len(ps)-1]
}
