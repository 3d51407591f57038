package agent

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/streamserver"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

var demoOS = &virt.GuestOS{ID: "nativevirt-demo", Name: "NativeVirt demo guest"}

// TestFreezeUnfreeze: freeze and unfreeze go to the guest agent; the VMI's fsFreezeStatus says
// "frozen" while the agent says so, and is empty otherwise (KubeVirt reports no "thawed").
func TestFreezeUnfreeze(t *testing.T) {
	e := startRunning(t)
	ctx := t.Context()
	// No guest agent: the freeze fails with libvirt's reason, and nothing is frozen.
	if err := e.agent.commands.Freeze(ctx, ns, vmName, vmUID, 0); !errors.Is(err, virt.ErrNoGuestAgent) {
		t.Errorf("freeze without a guest agent: err = %v, want ErrNoGuestAgent", err)
	}
	e.daemon.ConnectAgent(domain, demoOS)
	if err := e.agent.commands.Freeze(ctx, ns, vmName, vmUID, 0); err != nil {
		t.Fatalf("freeze: %v", err)
	}
	if !e.daemon.Domain(domain).FSFrozen {
		t.Fatal("the guest agent was not asked to freeze")
	}
	e.sync()
	if got := e.getVMI().Status.FSFreezeStatus; got != "frozen" {
		t.Errorf("fsFreezeStatus %q after the freeze, want frozen", got)
	}
	// Frozen, the guest agent answers nothing else: the resync asks it only its freeze status.
	e.now = e.now.Add(resync)
	e.sync()
	if got := e.getVMI().Status.FSFreezeStatus; got != "frozen" {
		t.Errorf("fsFreezeStatus %q at the resync of a frozen guest, want frozen", got)
	}
	if c := e.condition(kubevirtv1.VirtualMachineInstanceAgentConnected); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("AgentConnected %+v while frozen, want True (from before the freeze)", c)
	}
	if err := e.agent.commands.Unfreeze(ctx, ns, vmName, vmUID); err != nil {
		t.Fatalf("unfreeze: %v", err)
	}
	e.sync()
	if e.daemon.Domain(domain).FSFrozen {
		t.Error("the guest agent was not asked to thaw")
	}
	if got := e.getVMI().Status.FSFreezeStatus; got != "" {
		t.Errorf("fsFreezeStatus %q after the unfreeze, want empty", got)
	}
	// A paused guest's agent cannot answer.
	if err := e.agent.commands.Pause(ctx, ns, vmName, vmUID); err != nil {
		t.Fatal(err)
	}
	if err := e.agent.commands.Freeze(ctx, ns, vmName, vmUID, 0); !errors.Is(err, streamserver.ErrConflict) {
		t.Errorf("freeze of a paused guest: err = %v, want ErrConflict", err)
	}
}

// TestUnfreezeTimeout: a freeze with an unfreeze timeout ends by itself; an unfreeze before it
// cancels the timer, so a later freeze is not thawed by an old timer.
func TestUnfreezeTimeout(t *testing.T) {
	e := startRunning(t)
	ctx := t.Context()
	e.daemon.ConnectAgent(domain, demoOS)
	if err := e.agent.commands.Freeze(ctx, ns, vmName, vmUID, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	e.timers.Step(49 * time.Millisecond)
	if !e.daemon.Domain(domain).FSFrozen {
		t.Fatal("thawed before the unfreeze timeout of 50ms")
	}
	// The fake clock runs the timer's function before Step returns.
	e.timers.Step(time.Millisecond)
	if e.daemon.Domain(domain).FSFrozen {
		t.Fatal("still frozen once the unfreeze timeout of 50ms passed")
	}
	e.sync()
	if got := e.getVMI().Status.FSFreezeStatus; got != "" {
		t.Errorf("fsFreezeStatus %q after the automatic thaw, want empty", got)
	}

	// Freeze with a timeout, unfreeze, freeze without one: the first timer must not thaw.
	if err := e.agent.commands.Freeze(ctx, ns, vmName, vmUID, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := e.agent.commands.Unfreeze(ctx, ns, vmName, vmUID); err != nil {
		t.Fatal(err)
	}
	if err := e.agent.commands.Freeze(ctx, ns, vmName, vmUID, 0); err != nil {
		t.Fatal(err)
	}
	e.timers.Step(time.Hour)
	if e.timers.HasWaiters() {
		t.Error("a timer is still armed after a freeze without timeout")
	}
	if !e.daemon.Domain(domain).FSFrozen {
		t.Error("a cancelled unfreeze timer thawed a later freeze")
	}
}

// TestGuestAgentConnectIsSeenAtOnce: libvirt's agent lifecycle event makes the next sync ask
// the guest agent, without waiting for the resync.
func TestGuestAgentConnectIsSeenAtOnce(t *testing.T) {
	e := startRunning(t)
	e.now = e.now.Add(time.Second)
	e.daemon.ConnectAgent(domain, demoOS)
	e.sync()
	if c := e.condition(kubevirtv1.VirtualMachineInstanceAgentConnected); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("AgentConnected %+v right after the agent connected, want True", c)
	}
	if got := e.getVMI().Status.GuestOSInfo.ID; got != demoOS.ID {
		t.Errorf("guest OS %q right after the agent connected, want %q", got, demoOS.ID)
	}
	e.now = e.now.Add(time.Second)
	e.daemon.ConnectAgent(domain, nil)
	e.sync()
	if c := e.condition(kubevirtv1.VirtualMachineInstanceAgentConnected); c != nil {
		t.Errorf("AgentConnected %+v right after the agent went away, want none", c)
	}
}

// TestThawOutlivesTheAgent: the time a freeze ends is kept with the domain, so a restarted
// node agent thaws the guest (at once when the time has passed); an unfreeze, or a freeze
// without a timeout, removes it.
func TestThawOutlivesTheAgent(t *testing.T) {
	e := startRunning(t)
	ctx := t.Context()
	e.daemon.ConnectAgent(domain, demoOS)
	if err := e.agent.commands.Freeze(ctx, ns, vmName, vmUID, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := e.daemon.Domain(domain).Notes[thawNote]; got != e.now.Add(time.Hour).Format(time.RFC3339Nano) {
		t.Fatalf("thaw note %q, want the freeze's time plus its timeout", got)
	}
	// The agent process is replaced an hour later: the new one thaws at once.
	e.agent = e.newAgent()
	e.now = e.now.Add(time.Hour + time.Minute)
	e.sync()
	// The thaw runs on its timer, armed to fire at once: the fake clock runs it when stepped.
	e.timers.Step(0)
	if d := e.daemon.Domain(domain); d.FSFrozen || d.Notes[thawNote] != "" {
		t.Fatalf("a restarted agent attached after the thaw time: frozen %t, thaw note %q; want thawed, no note", d.FSFrozen, d.Notes[thawNote])
	}

	// A freeze without timeout after one with: no note, nothing thaws it.
	if err := e.agent.commands.Freeze(ctx, ns, vmName, vmUID, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := e.agent.commands.Freeze(ctx, ns, vmName, vmUID, 0); err != nil {
		t.Fatal(err)
	}
	if note, ok := e.daemon.Domain(domain).Notes[thawNote]; ok {
		t.Errorf("thaw note %q after a freeze without timeout", note)
	}
	if err := e.agent.commands.Unfreeze(ctx, ns, vmName, vmUID); err != nil {
		t.Fatal(err)
	}
}
