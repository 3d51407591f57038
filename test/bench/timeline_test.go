package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

var tlBase = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func tlAt(ms int) time.Time { return tlBase.Add(time.Duration(ms) * time.Millisecond) }

func TestTimelineObservations(t *testing.T) {
	var tl timeline
	tl.see(msCreated, tlAt(0))
	tl.observeVMIPhase("", tlAt(10))
	tl.observeVMIPhase("Pending", tlAt(20)) // a later event does not move a milestone
	unbound := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: " 0/1 nodes are available: 1 Insufficient cpu. "},
	}}}
	tl.observePod(unbound, tlAt(30))
	if tl.unschedulable != "0/1 nodes are available: 1 Insufficient cpu." {
		t.Errorf("unschedulable = %q", tl.unschedulable)
	}
	bound := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "node-1"}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodInitialized, Status: corev1.ConditionFalse},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse},
	}}}
	tl.observePod(bound, tlAt(40))
	if tl.unschedulable != "" {
		t.Errorf("a bound pod is still unschedulable: %q", tl.unschedulable)
	}
	if got, want := waitedForRoom([]*timeline{&tl, {}}), "1 at first unschedulable (0/1 nodes are available: 1 Insufficient cpu.)"; got != want {
		t.Errorf("waitedForRoom = %q, want %q", got, want)
	}
	tl.observeVMIPhase("Scheduled", tlAt(50))
	initialized := bound.DeepCopy()
	initialized.Status.Conditions[1].Status = corev1.ConditionTrue
	tl.observePod(initialized, tlAt(900))
	ready := initialized.DeepCopy()
	ready.Status.Conditions[2].Status = corev1.ConditionTrue
	tl.observePod(ready, tlAt(1500))
	tl.observeVMIPhase("Running", tlAt(2000))

	want := map[string]float64{"VMI created": 10, "pod created": 30, "pod bound": 40, "VMI Scheduled": 50,
		"pod initialized": 900, "pod Ready": 1500, "VMI Running": 2000}
	if diff := cmp.Diff(want, tl.offsets()); diff != "" {
		t.Errorf("offsets (-want +got):\n%s", diff)
	}
	if got := tl.last(runningChain); got != msRunning {
		t.Errorf("last = %v, want %v", got, msRunning)
	}
}

func TestPhaseStats(t *testing.T) {
	a, b, c := &timeline{}, &timeline{}, &timeline{}
	for i, tl := range []*timeline{a, b, c} {
		base := i * 1000
		tl.see(msCreated, tlAt(base))
		tl.see(msVMI, tlAt(base+10*(i+1)))
		tl.see(msPod, tlAt(base+100))
		if i < 2 {
			tl.see(msBound, tlAt(base+110+i*100))
		}
	}
	got := phaseStats([]*timeline{a, b, c}, []milestone{msCreated, msVMI, msPod, msBound})
	if len(got) != 3 {
		t.Fatalf("%d phases, want 3", len(got))
	}
	if got[0].Name() != "created → VMI created" || got[2].Name() != "pod created → pod bound" {
		t.Errorf("names %q, %q", got[0].Name(), got[2].Name())
	}
	if d := got[0].Dist; d.Count != 3 || d.Errors != 0 || d.P50Ms != 20 || d.MaxMs != 30 {
		t.Errorf("created → VMI: %+v", d)
	}
	// c was never bound: one missing sample.
	if d := got[2].Dist; d.Count != 2 || d.Errors != 1 || d.P50Ms != 10 || d.MaxMs != 110 {
		t.Errorf("pod → bound: %+v", d)
	}
}

func TestWhereStuck(t *testing.T) {
	done := &timeline{}
	done.see(msCreated, tlAt(0))
	done.see(msScheduled, tlAt(5))
	unsched := &timeline{unschedulable: "0/1 nodes are available: 1 Insufficient cpu."}
	unsched.see(msCreated, tlAt(0))
	unsched.see(msPod, tlAt(3))
	waiting := &timeline{}
	waiting.see(msCreated, tlAt(0))
	waiting.see(msBound, tlAt(3))
	chain := []milestone{msCreated, msVMI, msPod, msBound, msScheduled}
	got := whereStuck([]*timeline{done, unsched, unsched, waiting}, chain)
	want := "1 last seen: pod bound; 2 unschedulable (0/1 nodes are available: 1 Insufficient cpu.)"
	if got != want {
		t.Errorf("whereStuck = %q, want %q", got, want)
	}
	if got := whereStuck([]*timeline{done}, chain); got != "" {
		t.Errorf("all reached: %q", got)
	}
}

func TestLauncherMilestones(t *testing.T) {
	log := []byte(`2026-11-22T10:00:01.100000000Z I1122 10:00:01.099000       1 launcher.go:49] "Starting" vmi="ns/vm" namespace="ns"
2026-11-22T10:00:01.200000000Z I1122 10:00:01.199000       1 launcher.go:150] "libvirtd answers" vmi="ns/vm" after="90ms"
not a timestamped line
2026-11-22T10:00:01.250000000Z I1122 10:00:01.249000       1 launcher.go:124] "Ready" vmi="ns/vm" socket="/var/run/nativevirt/libvirt/libvirt-sock"
2026-11-22T10:00:09.000000000Z I1122 10:00:09.000000       1 launcher.go:124] "Ready" vmi="ns/vm"
`)
	started, ready := launcherMilestones(log)
	if !started.Equal(tlBase.Add(1100*time.Millisecond)) || !ready.Equal(tlBase.Add(1250*time.Millisecond)) {
		t.Errorf("started %v ready %v", started, ready)
	}
	if s, r := launcherMilestones(nil); !s.IsZero() || !r.IsZero() {
		t.Errorf("empty log: %v %v", s, r)
	}
	if a := libvirtdAnswered(log); !a.Equal(tlBase.Add(1200 * time.Millisecond)) {
		t.Errorf("libvirtd answers at %v", a)
	}
	if a := libvirtdAnswered(nil); !a.IsZero() {
		t.Errorf("empty log: libvirtd answers at %v", a)
	}
}

func TestAgentMilestones(t *testing.T) {
	log := []byte(`2026-11-22T10:00:02.000000000Z I1122 10:00:02.000000   1 launchers.go:117] "Attached to launcher" vmi="ns/a" pod="ns/virt-launcher-a-x" domain="ns_a"
2026-11-22T10:00:02.500000000Z I1122 10:00:02.500000   1 reconcile.go:190] "Domain started" vmi="ns/a" domain="ns_a" prepare="5ms" define="400ms" start="90ms"
2026-11-22T10:00:03.000000000Z I1122 10:00:03.000000   1 launchers.go:117] "Attached to launcher" vmi="ns/b" pod="ns/virt-launcher-b-y" domain="ns_b"
2026-11-22T10:00:04.000000000Z I1122 10:00:04.000000   1 reconcile.go:190] "Domain started" vmi="ns/a" domain="ns_a"
2026-11-22T10:00:04.000000000Z E1122 10:00:04.000000   1 agent.go:1] "Syncing VMI" err="x" vmi="ns/c"
`)
	got := agentMilestones(log)
	want := map[string][2]time.Time{
		"ns/a": {tlBase.Add(2 * time.Second), tlBase.Add(2500 * time.Millisecond)},
		"ns/b": {tlBase.Add(3 * time.Second), {}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("agentMilestones (-want +got):\n%s", diff)
	}
	steps := agentStartSteps(log)
	wantSteps := map[string][3]time.Duration{"ns/a": {5 * time.Millisecond, 400 * time.Millisecond, 90 * time.Millisecond}}
	if diff := cmp.Diff(wantSteps, steps); diff != "" {
		t.Errorf("agentStartSteps (-want +got):\n%s", diff)
	}
}
