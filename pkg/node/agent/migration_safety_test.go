package agent

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// The rule under test (migration_source.go): the agent never resumes a guest
// a migration paused; an outcome libvirt could not confirm is settled by the
// target's report, and without it the guest stays paused on the source.

func (e *env) targetReports() {
	e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) {
		v.Status.MigrationState.TargetNodeDomainDetected = true
	})
}

// unconfirmedTransfer runs a transfer that ends the way a broken connection
// during the switch-over does: libvirt reports an error and leaves the
// source paused because of the migration.
func unconfirmedTransfer(t *testing.T) *env {
	t.Helper()
	e := startRunning(t)
	e.daemon.MigrateHook = func(name string, _ virt.MigrateParams, _ <-chan struct{}) error {
		e.daemon.SetState(name, virt.StatePaused, virt.ReasonMigration)
		return errors.New("internal error: connection to the destination closed during Finish")
	}
	e.daemon.ResetCalls()
	e.migrateTo()
	e.sync()
	e.waitTransferEnded()
	return e
}

func TestUnconfirmedMigrationKeepsTheGuestPaused(t *testing.T) {
	e := unconfirmedTransfer(t)
	e.sync()
	if ms := e.migrationState(); ms.Completed {
		t.Fatalf("decided before the confirmation timeout: %+v", ms)
	}
	e.advance(confirmTimeout + time.Second)
	e.sync()
	ms := e.migrationState()
	if !ms.Completed || !ms.Failed || ms.FailureReason != reasonPausedUnconfirmed {
		t.Fatalf("%+v, want failed: %q", ms, reasonPausedUnconfirmed)
	}
	e.sync()
	if d := e.daemon.Domain(domain); d == nil || d.Info.State != virt.StatePaused {
		t.Fatalf("source domain %+v, want it kept paused", d)
	}
	for _, c := range []string{"Resume", "Start", "Destroy"} {
		if hasCall(e.daemon.Calls(), c+" ") {
			t.Errorf("the agent called %s on the paused source: %v", c, e.daemon.Calls())
		}
	}
	c := e.condition(kubevirtv1.VirtualMachineInstancePaused)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonPausedByMigration {
		t.Errorf("Paused condition %+v, want True with reason %s", c, ReasonPausedByMigration)
	}
}

func TestUnconfirmedMigrationSettledByTheTarget(t *testing.T) {
	e := unconfirmedTransfer(t)
	e.sync()
	e.targetReports()
	e.sync()
	ms := e.migrationState()
	if !ms.Completed || ms.Failed {
		t.Fatalf("%+v, want completed without failure once the target runs the guest", ms)
	}
	if e.daemon.Domain(domain) != nil {
		t.Fatalf("the paused source copy still exists: %+v", e.daemon.Domain(domain))
	}
	if !hasCall(e.daemon.Calls(), "Destroy "+domain) || hasCall(e.daemon.Calls(), "Resume ") {
		t.Errorf("calls %v: want the paused source destroyed, never resumed", e.daemon.Calls())
	}
}

// TestAgentRestartDuringMigration: a new agent process finds a migration its
// predecessor started (startTimestamp set, no transfer of its own).
func TestAgentRestartDuringMigration(t *testing.T) {
	tests := []struct {
		name string
		// libvirt is the state the old process left behind.
		libvirt func(e *env)
		// settle is what happens meanwhile (nil: nothing).
		settle func(e *env)
		// wantFailed, wantReason and wantDomain are the outcome.
		wantFailed  bool
		wantReason  string
		wantDomain  *virt.State // nil: gone
		wantAbort   bool
		wantDestroy bool
	}{{
		name: "the transfer still runs in libvirt: aborted, the guest stays",
		libvirt: func(e *env) {
			// The old process's call is still inside libvirt.
			e.daemon.MigrateHook = func(_ string, _ virt.MigrateParams, aborted <-chan struct{}) error {
				<-aborted
				return errors.New("operation aborted")
			}
			go func() {
				c, _ := e.daemon.Dial("")
				_ = c.Migrate(domain, virt.MigrateParams{})
			}()
			waitUntil(e.t, func() bool { return e.daemon.Migrating(domain) })
		},
		wantFailed: true, wantReason: reasonAgentRestarted, wantDomain: ptr(virt.StateRunning), wantAbort: true,
	}, {
		name:       "the transfer failed and libvirt resumed the guest",
		libvirt:    func(*env) {},
		wantFailed: true, wantReason: reasonAgentRestarted, wantDomain: ptr(virt.StateRunning),
	}, {
		name:       "libvirt left the guest paused; the target never reports",
		libvirt:    func(e *env) { e.daemon.SetState(domain, virt.StatePaused, virt.ReasonMigration) },
		settle:     func(e *env) { e.advance(confirmTimeout + time.Second) },
		wantFailed: true, wantReason: reasonPausedUnconfirmed, wantDomain: ptr(virt.StatePaused),
	}, {
		name:        "libvirt left the guest paused; the target runs it",
		libvirt:     func(e *env) { e.daemon.SetState(domain, virt.StatePaused, virt.ReasonMigration) },
		settle:      func(e *env) { e.targetReports() },
		wantDestroy: true,
	}, {
		name:    "the guest left; the target runs it",
		libvirt: func(e *env) { e.daemon.RemoveDomain(domain) },
		settle:  func(e *env) { e.targetReports() },
	}, {
		name:       "the guest left; the target never reports",
		libvirt:    func(e *env) { e.daemon.RemoveDomain(domain) },
		settle:     func(e *env) { e.advance(confirmTimeout + time.Second) },
		wantFailed: true, wantReason: reasonGoneUnconfirmed,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startRunning(t)
			e.migrateTo()
			e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) {
				now := v.Status.PhaseTransitionTimestamps[0].PhaseTransitionTimestamp
				v.Status.MigrationState.StartTimestamp = &now
			})
			tt.libvirt(e)
			e.agent = e.newAgent() // the restart
			e.daemon.ResetCalls()
			for i := 0; i < 20 && !e.migrationState().Completed; i++ {
				if after := e.sync(); after > 0 {
					// The agent looks again later: what it waits for is a job libvirt
					// ends (the clock of its timeouts is e's, advanced by settle).
					waitUntil(t, func() bool { return !e.daemon.Migrating(domain) })
				}
				if tt.settle != nil && i == 1 {
					tt.settle(e)
				}
			}
			ms := e.migrationState()
			if !ms.Completed || ms.Failed != tt.wantFailed || ms.FailureReason != tt.wantReason {
				t.Fatalf("%+v, want completed, failed=%v, reason %q", ms, tt.wantFailed, tt.wantReason)
			}
			d := e.daemon.Domain(domain)
			switch {
			case tt.wantDomain == nil && d != nil:
				t.Errorf("source domain %+v, want it gone", d.Info)
			case tt.wantDomain != nil && (d == nil || d.Info.State != *tt.wantDomain):
				t.Errorf("source domain %+v, want %s", d, *tt.wantDomain)
			}
			calls := e.daemon.Calls()
			if hasCall(calls, "Resume ") || hasCall(calls, "Start ") || hasCall(calls, "Migrate ") {
				t.Errorf("the restarted agent resumed, started or migrated the guest: %v", calls)
			}
			if got := hasCall(calls, "AbortJob "); got != tt.wantAbort {
				t.Errorf("AbortJob called = %v, want %v (%v)", got, tt.wantAbort, calls)
			}
			if got := hasCall(calls, "Destroy "); got != tt.wantDestroy {
				t.Errorf("Destroy called = %v, want %v (%v)", got, tt.wantDestroy, calls)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
