package agent

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/domains"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/streamserver"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

const domain = ns + "_" + vmName

// startRunning drives a fresh VMI to Running.
func startRunning(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.addVMI(scheduledVMI())
	e.addLauncher(true)
	e.sync() // define + start
	e.sync() // observe: Running
	if got := e.getVMI().Status.Phase; got != kubevirtv1.Running {
		t.Fatalf("phase = %s, want Running", got)
	}
	return e
}

func TestStartToRunning(t *testing.T) {
	e := newEnv(t)
	e.addVMI(scheduledVMI())
	e.addLauncher(false)

	// Launcher not ready: wait, touch nothing.
	if after := e.sync(); after != waitForLauncher {
		t.Errorf("requeue after %v while the launcher is not ready, want %v", after, waitForLauncher)
	}
	if calls := e.daemon.Calls(); len(calls) != 0 || e.writeCount() != 0 {
		t.Fatalf("not ready: calls %v, %d status writes; want none", calls, e.writeCount())
	}

	e.markReady()
	e.sync()
	if diff := cmp.Diff([]string{"Dial", "Define " + domain, "Start " + domain}, e.daemon.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	e.sync()
	st := e.getVMI().Status
	if st.Phase != kubevirtv1.Running || st.NodeName != node {
		t.Errorf("phase %s node %s, want Running on %s", st.Phase, st.NodeName, node)
	}
	wantIfaces := []kubevirtv1.VirtualMachineInstanceNetworkInterface{{
		Name: "default", MAC: "02:00:00:00:00:01", IP: "10.244.0.7", IPs: []string{"10.244.0.7"},
		InfoSource: "domain", PodInterfaceName: "eth0", QueueCount: 1, LinkState: "up",
	}}
	if diff := cmp.Diff(wantIfaces, st.Interfaces); diff != "" {
		t.Errorf("interfaces (-want +got):\n%s", diff)
	}
	for typ, want := range map[kubevirtv1.VirtualMachineInstanceConditionType]corev1.ConditionStatus{
		kubevirtv1.VirtualMachineInstanceReady:        corev1.ConditionTrue,
		kubevirtv1.VirtualMachineInstanceIsMigratable: corev1.ConditionTrue,
	} {
		if c := e.condition(typ); c == nil || c.Status != want {
			t.Errorf("condition %s = %+v, want %s", typ, c, want)
		}
	}
	if c := e.condition(kubevirtv1.VirtualMachineInstancePaused); c != nil {
		t.Errorf("Paused condition on a running guest: %+v", c)
	}

	// Nothing changed: no write, no libvirt change.
	writes := e.writeCount()
	e.daemon.ResetCalls()
	e.now = e.now.Add(time.Minute)
	e.sync()
	if e.writeCount() != writes {
		t.Errorf("status written %d times for an unchanged guest", e.writeCount()-writes)
	}
	for _, c := range e.daemon.Calls() {
		if c != "Dial" {
			t.Errorf("unexpected libvirt call %q on a steady guest", c)
		}
	}
}

// The sync that starts the domain also reports it Running, with one status
// write: under a burst of starts every worker may be busy starting another
// guest, and the status must not wait for one.
func TestStartReportsRunningAtOnce(t *testing.T) {
	e := newEnv(t)
	e.addVMI(scheduledVMI())
	e.addLauncher(true)
	e.sync()
	if got := e.getVMI().Status.Phase; got != kubevirtv1.Running {
		t.Fatalf("phase after the starting sync = %s, want Running", got)
	}
	if n := e.writeCount(); n != 1 {
		t.Errorf("%d status writes for the start, want 1", n)
	}
	// Without a start strategy the vCPUs run at once.
	if d := e.daemon.Domain(domain); d == nil || d.Info.State != virt.StateRunning {
		t.Errorf("domain after the start: %+v, want running", d)
	}
}

// The guest agent of a guest that has just been started cannot answer: it is
// asked first at the resync after the start.
func TestGuestOSAskedAtTheResync(t *testing.T) {
	e := startRunning(t)
	e.daemon.SetGuestOS(domain, &virt.GuestOS{ID: "debian", Name: "Debian GNU/Linux", KernelRelease: "6.1.0-56-amd64"})
	e.now = e.now.Add(resync / 2)
	e.sync()
	if got := e.getVMI().Status.GuestOSInfo; got.ID != "" {
		t.Errorf("guest OS %+v reported before the resync", got)
	}
	e.now = e.now.Add(resync / 2)
	e.sync()
	want := kubevirtv1.VirtualMachineInstanceGuestOSInfo{ID: "debian", Name: "Debian GNU/Linux", KernelRelease: "6.1.0-56-amd64"}
	if diff := cmp.Diff(want, e.getVMI().Status.GuestOSInfo); diff != "" {
		t.Errorf("guest OS at the resync (-want +got):\n%s", diff)
	}
	if c := e.condition(kubevirtv1.VirtualMachineInstanceAgentConnected); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("AgentConnected %+v once the guest agent answered, want True", c)
	}
	// The agent goes away (the guest stopped it): the condition goes at the next resync.
	e.daemon.SetGuestOS(domain, nil)
	e.now = e.now.Add(resync)
	e.sync()
	if c := e.condition(kubevirtv1.VirtualMachineInstanceAgentConnected); c != nil {
		t.Errorf("AgentConnected %+v after the guest agent went away, want none", c)
	}
}

func TestGuestStops(t *testing.T) {
	tests := []struct {
		name   string
		state  virt.State
		reason virt.Reason
		want   kubevirtv1.VirtualMachineInstancePhase
	}{
		{"guest powered off", virt.StateShutoff, virt.ReasonShutdown, kubevirtv1.Succeeded},
		{"QEMU crashed", virt.StateShutoff, virt.ReasonCrashed, kubevirtv1.Failed},
		{"guest crashed", virt.StateCrashed, virt.ReasonCrashed, kubevirtv1.Failed},
		{"destroyed by someone else", virt.StateShutoff, virt.ReasonDestroyed, kubevirtv1.Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startRunning(t)
			e.daemon.SetState(domain, tt.state, tt.reason)
			e.sync()
			st := e.getVMI().Status
			if st.Phase != tt.want {
				t.Errorf("phase = %s, want %s", st.Phase, tt.want)
			}
			if c := e.condition(kubevirtv1.VirtualMachineInstanceReady); c == nil || c.Status != corev1.ConditionFalse {
				t.Errorf("Ready = %+v, want False", c)
			}
			// Final: further syncs neither write nor touch the domain.
			writes := e.writeCount()
			e.daemon.ResetCalls()
			e.sync()
			if e.writeCount() != writes || len(e.daemon.Calls()) != 0 {
				t.Errorf("after the final phase: %d writes, calls %v", e.writeCount()-writes, e.daemon.Calls())
			}
		})
	}
}

func TestDeletionGracePeriod(t *testing.T) {
	grace := func(s int64) *int64 { return &s }
	tests := []struct {
		name         string
		grace        *int64
		guestObeys   bool
		wantCalls    []string // after the first sync of the deleted VMI
		advance      time.Duration
		wantCallsEnd []string // after advancing the clock and syncing again
		wantPhase    kubevirtv1.VirtualMachineInstancePhase
	}{
		{
			name: "guest shuts down in time", grace: grace(30), guestObeys: true,
			wantCalls: []string{"Shutdown " + domain}, advance: time.Second, wantCallsEnd: nil,
			wantPhase: kubevirtv1.Succeeded,
		},
		{
			name: "guest ignores ACPI: destroyed after the grace period", grace: grace(30),
			wantCalls: []string{"Shutdown " + domain}, advance: 31 * time.Second, wantCallsEnd: []string{"Destroy " + domain},
			wantPhase: kubevirtv1.Succeeded,
		},
		{
			name: "still within the grace period", grace: grace(30),
			wantCalls: []string{"Shutdown " + domain}, advance: 10 * time.Second, wantCallsEnd: nil,
			wantPhase: kubevirtv1.Running,
		},
		{
			name: "default grace period is 30s", grace: nil,
			wantCalls: []string{"Shutdown " + domain}, advance: 29 * time.Second, wantCallsEnd: nil,
			wantPhase: kubevirtv1.Running,
		},
		{
			name: "grace 0 destroys at once", grace: grace(0),
			wantCalls: []string{"Destroy " + domain}, advance: 0, wantCallsEnd: nil,
			wantPhase: kubevirtv1.Succeeded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startRunning(t)
			e.daemon.ShutdownIgnored = !tt.guestObeys
			e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) {
				now := metav1.NewTime(e.now)
				v.DeletionTimestamp = &now
				v.Spec.TerminationGracePeriodSeconds = tt.grace
			})
			e.daemon.ResetCalls()
			after := e.sync()
			if diff := cmp.Diff(tt.wantCalls, e.daemon.Calls()); diff != "" {
				t.Errorf("first sync calls (-want +got):\n%s", diff)
			}
			if after <= 0 || after > shutdownPoll {
				t.Errorf("requeue after %v, want within (0, %v]", after, shutdownPoll)
			}
			e.now = e.now.Add(tt.advance)
			e.daemon.ResetCalls()
			e.sync()
			if diff := cmp.Diff(tt.wantCallsEnd, e.daemon.Calls()); diff != "" {
				t.Errorf("second sync calls (-want +got):\n%s", diff)
			}
			e.sync()
			if got := e.getVMI().Status.Phase; got != tt.wantPhase {
				t.Errorf("phase = %s, want %s", got, tt.wantPhase)
			}
		})
	}
}

// The launcher, told by the pod's deletion, may stop the guest before the
// agent's own shutdown: the deleted VMI still succeeded.
func TestDeletedVMIStoppedByTheLauncher(t *testing.T) {
	for _, tt := range []struct {
		name    string
		stopped func(e *env)
	}{
		{"domain destroyed", func(e *env) { e.daemon.SetState(domain, virt.StateShutoff, virt.ReasonDestroyed) }},
		{"launcher pod terminating", func(e *env) {
			pod, err := e.agent.instances.pods.Pods(ns).Get("virt-launcher-vm-abcde")
			if err != nil {
				e.t.Fatal(err)
			}
			pod = pod.DeepCopy()
			now := metav1.NewTime(e.now)
			pod.DeletionTimestamp = &now
			if err := e.pods.Update(pod); err != nil {
				e.t.Fatal(err)
			}
			l := e.agent.launchers.get(vmUID)
			e.daemon.Kill()
			// The close event drops the connection asynchronously.
			e.waitClosed(l)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := startRunning(t)
			e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) {
				now := metav1.NewTime(e.now)
				v.DeletionTimestamp = &now
			})
			tt.stopped(e)
			e.sync()
			if got := e.getVMI().Status.Phase; got != kubevirtv1.Succeeded {
				t.Errorf("phase = %s, want Succeeded", got)
			}
		})
	}
}

func TestReattachAfterRestart(t *testing.T) {
	for _, keepCheckpoint := range []bool{true, false} {
		name := map[bool]string{true: "with checkpoint", false: "checkpoint lost"}[keepCheckpoint]
		t.Run(name, func(t *testing.T) {
			e := startRunning(t)
			pid := e.daemon.Domain(domain).PID
			if !keepCheckpoint {
				if err := os.RemoveAll(e.stateDir); err != nil {
					t.Fatal(err)
				}
			}
			// The agent process is replaced; the launcher and guest run on.
			e.agent = e.newAgent()
			e.daemon.ResetCalls()
			writes := e.writeCount()
			e.sync()
			e.sync()
			for _, c := range e.daemon.Calls() {
				if c != "Dial" {
					t.Errorf("re-attach made libvirt call %q", c)
				}
			}
			if got := e.daemon.Domain(domain).PID; got != pid {
				t.Errorf("QEMU pid %d after re-attach, want %d (guest restarted)", got, pid)
			}
			if e.writeCount() != writes {
				t.Errorf("re-attach wrote the status %d times, want 0", e.writeCount()-writes)
			}
			if r, ok := e.agent.store.Get(vmUID); !ok || !r.Started {
				t.Errorf("checkpoint after re-attach = %+v, %v; want Started", r, ok)
			}
			// And the re-attached agent still notices the guest stopping.
			e.daemon.SetState(domain, virt.StateShutoff, virt.ReasonShutdown)
			e.sync()
			if got := e.getVMI().Status.Phase; got != kubevirtv1.Succeeded {
				t.Errorf("phase = %s, want Succeeded", got)
			}
		})
	}
}

func TestStartedGuestIsNeverStartedAgain(t *testing.T) {
	e := newEnv(t)
	e.addVMI(scheduledVMI())
	e.addLauncher(true)
	e.sync()
	// The guest powers off before the agent ever wrote Running.
	e.daemon.SetState(domain, virt.StateShutoff, virt.ReasonShutdown)
	e.daemon.ResetCalls()
	e.sync()
	for _, c := range e.daemon.Calls() {
		if c == "Start "+domain || c == "Define "+domain {
			t.Errorf("stopped guest touched again: %q", c)
		}
	}
	if got := e.getVMI().Status.Phase; got != kubevirtv1.Succeeded {
		t.Errorf("phase = %s, want Succeeded", got)
	}
}

func TestFailedStartIsRetriedWithAFreshDefinition(t *testing.T) {
	e := newEnv(t)
	e.addVMI(scheduledVMI())
	e.addLauncher(true)
	e.daemon.StartErr = errors.New("qemu unexpectedly closed the monitor")
	if _, err := e.agent.instances.sync(t.Context(), key); err == nil {
		t.Fatal("sync succeeded although the domain did not start")
	}
	if r, _ := e.agent.store.Get(vmUID); r.Started {
		t.Error("checkpoint says Started after a failed start")
	}
	if e.writeCount() != 0 {
		t.Errorf("%d status writes after a failed start, want 0", e.writeCount())
	}
	e.daemon.ResetCalls()
	e.sync()
	want := []string{"Undefine " + domain, "Define " + domain, "Start " + domain}
	if diff := cmp.Diff(want, e.daemon.Calls()); diff != "" {
		t.Errorf("retry calls (-want +got):\n%s", diff)
	}
	e.sync()
	if got := e.getVMI().Status.Phase; got != kubevirtv1.Running {
		t.Errorf("phase = %s, want Running", got)
	}
}

func TestLauncherGone(t *testing.T) {
	e := startRunning(t)
	if err := e.pods.Delete(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "virt-launcher-vm-abcde"}}); err != nil {
		t.Fatal(err)
	}
	e.sync()
	if got := e.getVMI().Status.Phase; got != kubevirtv1.Failed {
		t.Errorf("phase = %s after the launcher vanished, want Failed", got)
	}
}

func TestLauncherDaemonDies(t *testing.T) {
	e := startRunning(t)
	l := e.agent.launchers.get(vmUID)
	e.daemon.Kill()
	// The close event drops the connection asynchronously.
	e.waitClosed(l)
	if e.agent.launchers.get(vmUID) != nil {
		t.Fatal("connection to a dead daemon kept")
	}
	// The pod is terminating now; the VMI fails.
	e.updateVMI(func(*kubevirtv1.VirtualMachineInstance) {})
	obj, _, _ := e.pods.GetByKey(ns + "/virt-launcher-vm-abcde")
	pod := obj.(*corev1.Pod).DeepCopy()
	now := metav1.NewTime(e.now)
	pod.DeletionTimestamp = &now
	_ = e.pods.Update(pod)
	e.sync()
	if got := e.getVMI().Status.Phase; got != kubevirtv1.Failed {
		t.Errorf("phase = %s, want Failed", got)
	}
}

func TestPauseUnpause(t *testing.T) {
	e := startRunning(t)
	ctx := t.Context()
	steps := []struct {
		name       string
		do         func() error
		wantErr    error
		wantPaused bool
	}{
		{"unpause a running guest", func() error { return e.agent.commands.Unpause(ctx, ns, vmName, vmUID) }, streamserver.ErrConflict, false},
		{"pause", func() error { return e.agent.commands.Pause(ctx, ns, vmName, vmUID) }, nil, true},
		{"pause again", func() error { return e.agent.commands.Pause(ctx, ns, vmName, vmUID) }, streamserver.ErrConflict, true},
		{"softreboot while paused", func() error { return e.agent.commands.SoftReboot(ctx, ns, vmName, vmUID) }, streamserver.ErrConflict, true},
		{"pause with a stale uid", func() error { return e.agent.commands.Pause(ctx, ns, vmName, "old-uid") }, streamserver.ErrConflict, true},
		{"pause an unknown VMI", func() error { return e.agent.commands.Pause(ctx, ns, "other", vmUID) }, streamserver.ErrNotFound, true},
		{"unpause", func() error { return e.agent.commands.Unpause(ctx, ns, vmName, vmUID) }, nil, false},
		{"softreboot", func() error { return e.agent.commands.SoftReboot(ctx, ns, vmName, vmUID) }, nil, false},
	}
	for _, s := range steps {
		err := s.do()
		if (s.wantErr == nil) != (err == nil) || (s.wantErr != nil && !errors.Is(err, s.wantErr)) {
			t.Errorf("%s: err = %v, want %v", s.name, err, s.wantErr)
		}
		e.sync()
		c := e.condition(kubevirtv1.VirtualMachineInstancePaused)
		if got := c != nil && c.Status == corev1.ConditionTrue; got != s.wantPaused {
			t.Errorf("%s: Paused condition = %+v, want paused=%v", s.name, c, s.wantPaused)
		}
		if s.wantPaused && c != nil && c.Reason != ReasonPausedByUser {
			t.Errorf("%s: Paused reason %q", s.name, c.Reason)
		}
	}
}

// A VMI with startStrategy Paused is started with paused vCPUs: Running with the Paused
// condition (paused by the user, as KubeVirt reports it), not Ready, until it is unpaused.
func TestStartPaused(t *testing.T) {
	e := newEnv(t)
	vmi := scheduledVMI()
	paused := kubevirtv1.StartStrategyPaused
	vmi.Spec.StartStrategy = &paused
	e.addVMI(vmi)
	e.addLauncher(true)
	e.sync()
	if d := e.daemon.Domain(domain); d == nil || d.Info.State != virt.StatePaused || d.Info.Reason != virt.ReasonUser {
		t.Fatalf("domain after the start: %+v, want paused by the user", d)
	}
	if got := e.getVMI().Status.Phase; got != kubevirtv1.Running {
		t.Errorf("phase %s, want Running", got)
	}
	if c := e.condition(kubevirtv1.VirtualMachineInstancePaused); c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonPausedByUser {
		t.Errorf("Paused condition %+v, want True, %s", c, ReasonPausedByUser)
	}
	if c := e.condition(kubevirtv1.VirtualMachineInstanceReady); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("Ready condition %+v, want False while paused", c)
	}
	if err := e.agent.commands.Unpause(t.Context(), ns, vmName, vmUID); err != nil {
		t.Fatalf("unpause: %v", err)
	}
	e.sync()
	if d := e.daemon.Domain(domain); d.Info.State != virt.StateRunning {
		t.Errorf("domain after the unpause: %+v, want running", d.Info)
	}
	if c := e.condition(kubevirtv1.VirtualMachineInstancePaused); c != nil {
		t.Errorf("Paused condition after the unpause: %+v", c)
	}
	if c := e.condition(kubevirtv1.VirtualMachineInstanceReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Ready condition %+v after the unpause, want True", c)
	}
}

func TestConsoleAndVNCNeedARunningDomain(t *testing.T) {
	e := newEnv(t)
	e.addVMI(scheduledVMI())
	if _, err := e.agent.guest.Console(t.Context(), ns, vmName, vmUID); !errors.Is(err, streamserver.ErrNotFound) {
		t.Errorf("console before start: err = %v, want ErrNotFound", err)
	}
	e.addLauncher(true)
	e.sync()
	e.sync()
	s, err := e.agent.guest.Console(t.Context(), ns, vmName, vmUID)
	if err != nil {
		t.Fatalf("console of a running guest: %v", err)
	}
	defer s.Close()
	g := e.daemon.GuestConsole()
	go func() { _, _ = g.Write([]byte("hi")) }()
	buf := make([]byte, 2)
	if _, err := s.Read(buf); err != nil || string(buf) != "hi" {
		t.Errorf("console read %q, %v", buf, err)
	}
}

// TestCommandsBeforeReattach: right after an agent (re)start, a VMI whose status says Running
// has no attached launcher yet; commands answer "retry" (503), not "no such domain" (404).
func TestCommandsBeforeReattach(t *testing.T) {
	e := newEnv(t)
	vmi := scheduledVMI()
	vmi.Status.Phase = kubevirtv1.Running
	e.addVMI(vmi)
	if _, err := e.agent.guest.Console(t.Context(), ns, vmName, vmUID); !errors.Is(err, streamserver.ErrUnavailable) {
		t.Errorf("console before re-attach: err = %v, want ErrUnavailable", err)
	}
	if err := e.agent.commands.Pause(t.Context(), ns, vmName, vmUID); !errors.Is(err, streamserver.ErrUnavailable) {
		t.Errorf("pause before re-attach: err = %v, want ErrUnavailable", err)
	}
}

// TestBlockClaimsReachTheConverter: claims the launcher pod attaches as devices are block
// volumes for the domain; mounted claims are not.
func TestBlockClaimsReachTheConverter(t *testing.T) {
	e := newEnv(t)
	e.addVMI(scheduledVMI())
	e.addLauncher(true)
	obj, _, _ := e.pods.GetByKey(ns + "/virt-launcher-vm-abcde")
	pod := obj.(*corev1.Pod).DeepCopy()
	pod.Spec.Containers = []corev1.Container{{
		Name:          "compute",
		VolumeDevices: []corev1.VolumeDevice{{Name: "raw", DevicePath: "/dev/raw"}},
		VolumeMounts:  []corev1.VolumeMount{{Name: "data", MountPath: "/var/run/nativevirt-pvcs/data"}},
	}}
	if err := e.pods.Update(pod); err != nil {
		t.Fatal(err)
	}
	facts := e.captureFacts()
	e.sync()
	if diff := cmp.Diff(map[string]bool{"raw": true}, facts.BlockVolumes); diff != "" {
		t.Errorf("block volumes (-want +got):\n%s", diff)
	}
}

func TestDisksPrepared(t *testing.T) {
	e := newEnv(t)
	vmi := scheduledVMI()
	vmi.Spec.Volumes = []kubevirtv1.Volume{
		{Name: "root", VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: "img"}}},
		{Name: "scratch", VolumeSource: kubevirtv1.VolumeSource{EmptyDisk: &kubevirtv1.EmptyDiskSource{Capacity: resource.MustParse("64Mi")}}},
		{Name: "ci", VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{
			UserDataSecretRef: &corev1.LocalObjectReference{Name: "ud"},
			NetworkDataBase64: base64.StdEncoding.EncodeToString([]byte("version: 2\n")),
		}}},
	}
	vmi.Spec.Domain.Devices.Disks = []kubevirtv1.Disk{{Name: "root"}, {Name: "scratch"}, {Name: "ci"}}
	e.addVMI(vmi)
	e.addLauncher(true)
	e.secrets[ns+"/ud"] = &corev1.Secret{Data: map[string][]byte{"userdata": []byte("#cloud-config\n" + string(make([]byte, 4096)))}}
	disks := podfs.Locator{KubeletRoot: e.root}.EmptyDir(podUID, podfs.DisksVolume)
	if err := os.MkdirAll(filepath.Join(disks, "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(disks, "root", DiskImage), []byte("QFI\xfb\x00\x00\x00\x03"), 0o644); err != nil {
		t.Fatal(err)
	}
	facts := e.captureFacts()
	e.sync()
	if diff := cmp.Diff(map[string]string{"root": "qcow2", "scratch": "raw"}, facts.DiskFormats); diff != "" {
		t.Errorf("disk formats (-want +got):\n%s", diff)
	}
	st, err := os.Stat(filepath.Join(disks, "scratch", DiskImage))
	if err != nil || st.Size() != 64<<20 {
		t.Errorf("emptyDisk image: %v, size %d", err, st.Size())
	}
	want := []isoCall{{kind: NoCloud, user: "#cloud-config\n" + string(make([]byte, 4096)), vmi: vmName, network: "version: 2\n"}}
	if diff := cmp.Diff(want, e.isos, cmp.AllowUnexported(isoCall{})); diff != "" {
		t.Errorf("ISO calls (-want +got):\n%s", diff)
	}
	iso, err := os.ReadFile(filepath.Join(disks, "ci", CloudInitISO))
	if err != nil || string(iso) != "ISO:"+want[0].user {
		t.Errorf("ISO file: %v (%d bytes)", err, len(iso))
	}
	// The writable containerDisk writes to an overlay over the copied image,
	// made once: a second preparation must not replace what the guest wrote.
	overlay := filepath.Join(disks, "root", "overlay.qcow2")
	if diff := cmp.Diff([]string{".overlay.qcow2.tmp over disk.img (qcow2)"}, e.overlays); diff != "" {
		t.Errorf("overlays (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(overlay, []byte("written by the guest"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.agent.instances.prepare.disks(context.Background(), vmi, e.agent.launchers.get(vmUID).fs.Disks); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(overlay); string(got) != "written by the guest" || len(e.overlays) != 1 {
		t.Errorf("overlay after a second preparation: %q (%d creations)", got, len(e.overlays))
	}
}

func TestMissingSecretFailsTheStart(t *testing.T) {
	e := newEnv(t)
	vmi := scheduledVMI()
	vmi.Spec.Volumes = []kubevirtv1.Volume{{Name: "ci", VolumeSource: kubevirtv1.VolumeSource{
		CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{UserDataSecretRef: &corev1.LocalObjectReference{Name: "missing"}}}}}
	e.addVMI(vmi)
	e.addLauncher(true)
	if _, err := e.agent.instances.sync(t.Context(), key); err == nil {
		t.Fatal("sync succeeded without the cloud-init secret")
	}
	e.onlyDialed()
}

// onlyDialed fails the test when the agent did more with libvirt than connect: nothing is
// defined or started while the disks cannot be prepared.
func (e *env) onlyDialed() {
	e.t.Helper()
	for _, c := range e.daemon.Calls() {
		if c != "Dial" {
			e.t.Errorf("libvirt call %q although the disks could not be prepared", c)
		}
	}
}

func TestFinalPhase(t *testing.T) {
	now := time.Now()
	asked := domains.Record{ShutdownAt: &now}
	tests := []struct {
		name string
		info virt.DomainInfo
		rec  domains.Record
		want kubevirtv1.VirtualMachineInstancePhase
	}{
		{"powered off", virt.DomainInfo{State: virt.StateShutoff, Reason: virt.ReasonShutdown}, domains.Record{}, kubevirtv1.Succeeded},
		{"destroyed after our shutdown", virt.DomainInfo{State: virt.StateShutoff, Reason: virt.ReasonDestroyed}, asked, kubevirtv1.Succeeded},
		{"destroyed unasked", virt.DomainInfo{State: virt.StateShutoff, Reason: virt.ReasonDestroyed}, domains.Record{}, kubevirtv1.Failed},
		{"crashed", virt.DomainInfo{State: virt.StateCrashed, Reason: virt.ReasonCrashed}, asked, kubevirtv1.Failed},
		{"QEMU failed", virt.DomainInfo{State: virt.StateShutoff, Reason: virt.ReasonFailed}, domains.Record{}, kubevirtv1.Failed},
		{"gone after our shutdown", virt.DomainInfo{}, domains.Record{ShutdownAt: &now, Gone: true}, kubevirtv1.Succeeded},
		{"gone unasked", virt.DomainInfo{}, domains.Record{Gone: true}, kubevirtv1.Failed},
		{"powered off for the kubelet", virt.DomainInfo{State: virt.StateShutoff, Reason: virt.ReasonShutdown}, domains.Record{Killed: true}, kubevirtv1.Failed},
	}
	for _, tt := range tests {
		if got := FinalPhase(tt.info, tt.rec); got != tt.want {
			t.Errorf("%s: FinalPhase = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestPortForward: a port forward needs a running domain, dials through DialGuest with the
// launcher's libvirt socket (whose pod's network it enters), and a guest port that refuses is
// the caller's conflict, not the agent's failure.
func TestPortForward(t *testing.T) {
	e := newEnv(t)
	e.addVMI(scheduledVMI())
	port := streams.ForwardedPort{Port: 8080, Protocol: "tcp"}
	if _, err := e.agent.guest.PortForward(t.Context(), ns, vmName, vmUID, port); !errors.Is(err, streamserver.ErrNotFound) {
		t.Errorf("port forward before start: err = %v, want ErrNotFound", err)
	}
	e.addLauncher(true)
	e.sync()
	e.sync()
	if _, err := e.agent.guest.PortForward(t.Context(), ns, vmName, vmUID, port); !errors.Is(err, streamserver.ErrConflict) {
		t.Errorf("port forward without DialGuest: err = %v, want ErrConflict", err)
	}

	var sockets []string
	var dialed []streams.ForwardedPort
	e.agent.guest.dialGuest = func(_ context.Context, socket string, p streams.ForwardedPort) (net.Conn, error) {
		sockets, dialed = append(sockets, socket), append(dialed, p)
		if p.Port != 8080 {
			return nil, errors.New("connection refused")
		}
		a, g := net.Pipe()
		go func() { defer g.Close(); _, _ = io.Copy(g, g) }()
		return a, nil
	}
	c, err := e.agent.guest.PortForward(t.Context(), ns, vmName, vmUID, port)
	if err != nil {
		t.Fatalf("port forward of a running guest: %v", err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Errorf("read %q, %v; want the echo", buf, err)
	}
	if _, err := e.agent.guest.PortForward(t.Context(), ns, vmName, vmUID, streams.ForwardedPort{Port: 9, Protocol: "tcp"}); !errors.Is(err, streamserver.ErrConflict) {
		t.Errorf("a refused guest port: err = %v, want ErrConflict", err)
	}
	if len(sockets) != 2 || !strings.HasSuffix(sockets[0], podfs.LibvirtSocket) || dialed[0] != port {
		t.Errorf("DialGuest calls: sockets %q, ports %+v; want the launcher's libvirt socket and port 8080/tcp first", sockets, dialed)
	}
	if _, err := e.agent.guest.PortForward(t.Context(), ns, vmName, "other-uid", port); !errors.Is(err, streamserver.ErrConflict) {
		t.Errorf("port forward with another uid: err = %v, want ErrConflict", err)
	}
}

// TestGuestAgentInfo: the guest agent's report in KubeVirt's form (time zone "name, offset",
// login times in seconds, disks by serial); a guest without an agent is a conflict.
func TestGuestAgentInfo(t *testing.T) {
	e := newEnv(t)
	e.addVMI(scheduledVMI())
	e.addLauncher(true)
	e.sync()
	e.sync()
	if _, err := e.agent.guest.GuestAgentInfo(t.Context(), ns, vmName, vmUID); !errors.Is(err, streamserver.ErrConflict) ||
		!strings.Contains(err.Error(), "does not have guest agent connected") {
		t.Errorf("a guest without an agent: err = %v, want a conflict saying so", err)
	}
	e.daemon.SetGuestInfo(domain, &virt.GuestInfo{
		OS:           virt.GuestOS{ID: "debian", Name: "Debian GNU/Linux", KernelRelease: "6.1.0-28-amd64", Machine: "x86_64"},
		Hostname:     "vm1",
		TimezoneName: "CET", TimezoneOffset: 3600,
		Users: []virt.GuestUser{{Name: "root", LoginTime: 1700000000500}},
		FileSystems: []virt.GuestFileSystem{{Name: "vda1", MountPoint: "/", Type: "ext4",
			UsedBytes: 1 << 30, TotalBytes: 4 << 30, DiskSerials: []string{"root-disk"}}},
		AgentVersion:   "7.2.0",
		Commands:       []virt.GuestAgentCommand{{Name: "guest-ping", Enabled: true}, {Name: "guest-exec", Enabled: false}},
		FSFreezeStatus: "thawed",
	})
	got, err := e.agent.guest.GuestAgentInfo(t.Context(), ns, vmName, vmUID)
	if err != nil {
		t.Fatal(err)
	}
	want := &kubevirtv1.VirtualMachineInstanceGuestAgentInfo{
		GAVersion:         "7.2.0",
		SupportedCommands: []kubevirtv1.GuestAgentCommandInfo{{Name: "guest-ping", Enabled: true}, {Name: "guest-exec"}},
		FSFreezeStatus:    "thawed",
		Hostname:          "vm1",
		OS:                kubevirtv1.VirtualMachineInstanceGuestOSInfo{ID: "debian", Name: "Debian GNU/Linux", KernelRelease: "6.1.0-28-amd64", Machine: "x86_64"},
		Timezone:          "CET, 3600",
		UserList:          []kubevirtv1.VirtualMachineInstanceGuestOSUser{{UserName: "root", LoginTime: 1700000000.5}},
		FSInfo: kubevirtv1.VirtualMachineInstanceFileSystemInfo{Filesystems: []kubevirtv1.VirtualMachineInstanceFileSystem{{
			DiskName: "vda1", MountPoint: "/", FileSystemType: "ext4", UsedBytes: 1 << 30, TotalBytes: 4 << 30,
			Disk: []kubevirtv1.VirtualMachineInstanceFileSystemDisk{{Serial: "root-disk"}}}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("guest agent info (-want +got):\n%s", diff)
	}
	if _, err := e.agent.guest.GuestAgentInfo(t.Context(), ns, vmName, "other-uid"); !errors.Is(err, streamserver.ErrConflict) {
		t.Errorf("another uid: err = %v, want ErrConflict", err)
	}
}
