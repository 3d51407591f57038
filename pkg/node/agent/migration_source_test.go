package agent

import (
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

const (
	migrationUID = types.UID("99999999-8888-7777-6666-555555555555")
	otherNode    = "node-2"
)

// advance moves the fake clock.
func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

// migrateTo starts a migration of the running VMI to otherNode whose target
// is ready (the controller's and the target agent's writes).
func (e *env) migrateTo() {
	e.t.Helper()
	e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) {
		v.Status.MigrationState = &kubevirtv1.VirtualMachineInstanceMigrationState{
			MigrationUID: migrationUID, Mode: kubevirtv1.MigrationPreCopy,
			SourceNode: node, SourcePod: "virt-launcher-vm-abcde",
			TargetNode: otherNode, TargetPod: "virt-launcher-vm-target",
			TargetNodeAddress: "10.0.0.1:8186",
		}
	})
}

func (e *env) migrationState() *kubevirtv1.VirtualMachineInstanceMigrationState {
	return e.getVMI().Status.MigrationState
}

// blockMigrations makes the fake libvirt hold every migration until the
// returned function is called with its outcome (nil: success), or until an
// abort when abortable.
func (e *env) blockMigrations(abortable bool) (release func(error), started chan virt.MigrateParams) {
	outcome := make(chan error, 1)
	started = make(chan virt.MigrateParams, 1)
	e.daemon.MigrateHook = func(_ string, p virt.MigrateParams, aborted <-chan struct{}) error {
		started <- p
		if abortable {
			select {
			case err := <-outcome:
				return err
			case <-aborted:
				return errors.New("operation aborted: migration out: canceled by client")
			}
		}
		return <-outcome
	}
	return func(err error) { outcome <- err }, started
}

// waitTransferEnded waits until the agent's transfer of the VMI ended.
func (e *env) waitTransferEnded() {
	e.t.Helper()
	m := e.agent.source.migrationOf(vmUID)
	if m == nil {
		e.t.Fatal("no migration in the agent")
	}
	select {
	case <-m.done:
	case <-time.After(20 * time.Second):
		e.t.Fatal("the transfer did not end")
	}
}

func countCalls(calls []string, prefix string) int {
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func (e *env) migrationDir() string {
	return filepath.Join(podfs.Locator{KubeletRoot: e.root}.EmptyDir(podUID, podfs.PrivateVolume), MigrationDir)
}

func hasCall(calls []string, prefix string) bool {
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

func TestMigrationSourceSucceeds(t *testing.T) {
	e := startRunning(t)
	e.agent.source.cfg.BandwidthMiB = 64
	release, started := e.blockMigrations(false)
	e.migrateTo()
	e.sync()
	ms := e.migrationState()
	if ms.StartTimestamp == nil || ms.Completed {
		t.Fatalf("after the start: %+v, want startTimestamp set and not completed", ms)
	}
	var p virt.MigrateParams
	select {
	case p = <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("libvirt was not asked to migrate")
	}
	want := virt.MigrateParams{
		DestURI:        "qemu+unix:///system?socket=/var/run/nativevirt/migration/libvirt.sock",
		MigrationURI:   "unix:///var/run/nativevirt/migration/qemu.sock",
		DisksURI:       "unix:///var/run/nativevirt/migration/nbd.sock",
		CopyDisksUnder: "/var/run/nativevirt-disks",
		BandwidthMiB:   64,
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("migration parameters (-want +got):\n%s", diff)
	}

	// The source libvirt's connections reach the tunnel through the sockets
	// in the source pod's migration directory.
	for _, ch := range streams.MigrationChannels {
		if _, err := os.Stat(filepath.Join(e.migrationDir(), ch.Socket())); err != nil {
			t.Errorf("socket %s: %v", ch.Socket(), err)
		}
	}
	dir, err := podfs.Open(e.migrationDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", dir.Path("qemu.sock"))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "RAM"); err != nil {
		t.Fatal(err)
	}
	echo := make([]byte, 3)
	if _, err := io.ReadFull(c, echo); err != nil || string(echo) != "RAM" {
		t.Errorf("through the tunnel: %q, %v", echo, err)
	}
	_ = c.Close()
	_ = dir.Close()
	e.mu.Lock()
	tunnels := append([]streams.MigrationTarget(nil), e.tunnels...)
	e.mu.Unlock()
	if diff := cmp.Diff([]streams.MigrationTarget{{UID: migrationUID, Channel: streams.ChannelQEMU}}, tunnels); diff != "" {
		t.Errorf("tunnels opened (-want +got):\n%s", diff)
	}

	// A sync during the transfer changes nothing.
	writes := e.writeCount()
	e.sync()
	if e.writeCount() != writes {
		t.Errorf("status written during the transfer: %+v", e.getVMI().Status)
	}

	release(nil)
	e.waitTransferEnded()
	if e.daemon.Domain(domain) != nil {
		t.Fatal("the source domain is still defined after the migration")
	}
	// The launcher ends with its domain; the VMI must not fail for it.
	e.updatePodPhase("virt-launcher-vm-abcde", corev1.PodSucceeded)
	e.sync()
	if ms := e.migrationState(); ms.Completed {
		t.Fatalf("completed before the target reported the guest: %+v", ms)
	}
	if st := e.getVMI().Status; st.Phase != kubevirtv1.Running {
		t.Fatalf("phase %s while the guest moves, want Running", st.Phase)
	}
	for _, ch := range streams.MigrationChannels {
		if _, err := os.Stat(filepath.Join(e.migrationDir(), ch.Socket())); !os.IsNotExist(err) {
			t.Errorf("socket %s still there after the transfer: %v", ch.Socket(), err)
		}
	}

	// The target agent reports the guest running there.
	e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) {
		now := metav1.NewTime(e.now)
		v.Status.MigrationState.TargetNodeDomainDetected = true
		v.Status.MigrationState.TargetNodeDomainReadyTimestamp = &now
	})
	e.sync()
	ms = e.migrationState()
	if !ms.Completed || ms.Failed || ms.EndTimestamp == nil || ms.FailureReason != "" {
		t.Fatalf("after the target's report: %+v, want completed, not failed, with an end time", ms)
	}
	if st := e.getVMI().Status; st.Phase != kubevirtv1.Running || st.NodeName != node {
		t.Errorf("phase %s node %s: the agent must leave the handover to the controller", st.Phase, st.NodeName)
	}
	// Until the handover: nothing more to do, and never a start here.
	writes = e.writeCount()
	e.sync()
	if e.writeCount() != writes {
		t.Errorf("status written after completion: %+v", e.getVMI().Status)
	}
	if n := countCalls(e.daemon.Calls(), "Start "); n != 1 {
		t.Errorf("%d starts, want the one before the migration: %v", n, e.daemon.Calls())
	}
	if e.agent.launchers.get(vmUID) != nil {
		t.Error("the agent still holds the source launcher")
	}
}

func (e *env) updatePodPhase(name string, phase corev1.PodPhase) {
	e.t.Helper()
	obj, ok, err := e.pods.GetByKey(ns + "/" + name)
	if err != nil || !ok {
		e.t.Fatalf("pod %s: %v %v", name, ok, err)
	}
	p := obj.(*corev1.Pod).DeepCopy()
	p.Status.Phase = phase
	if err := e.pods.Update(p); err != nil {
		e.t.Fatal(err)
	}
}

func TestMigrationSourceFailureKeepsTheGuest(t *testing.T) {
	e := startRunning(t)
	release, started := e.blockMigrations(false)
	e.migrateTo()
	e.sync()
	<-started
	release(errors.New("unable to connect to the target: connection reset"))
	e.waitTransferEnded()
	e.sync()
	ms := e.migrationState()
	if !ms.Completed || !ms.Failed || !strings.Contains(ms.FailureReason, "connection reset") || ms.EndTimestamp == nil {
		t.Fatalf("after a failed transfer: %+v, want completed and failed with the reason", ms)
	}
	if d := e.daemon.Domain(domain); d == nil || d.Info.State != virt.StateRunning {
		t.Fatalf("source domain %+v, want it running", d)
	}
	// The usual per-node sync goes on: the guest runs here.
	e.daemon.SetState(domain, virt.StatePaused, virt.ReasonUser)
	e.sync()
	if c := e.condition(kubevirtv1.VirtualMachineInstancePaused); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Paused condition %+v after a pause on the source, want True", c)
	}
	if n := countCalls(e.daemon.Calls(), "Migrate "); n != 1 {
		t.Errorf("%d migrations, want 1: %v", n, e.daemon.Calls())
	}
}

func TestMigrationAbortRequested(t *testing.T) {
	e := startRunning(t)
	_, started := e.blockMigrations(true)
	e.migrateTo()
	e.sync()
	<-started
	e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.MigrationState.AbortRequested = true })
	e.sync()
	e.waitTransferEnded()
	if !hasCall(e.daemon.Calls(), "AbortJob "+domain) {
		t.Errorf("libvirt's job was not aborted: %v", e.daemon.Calls())
	}
	e.sync()
	ms := e.migrationState()
	if !ms.Completed || !ms.Failed || ms.AbortStatus != kubevirtv1.MigrationAbortSucceeded || !strings.Contains(ms.FailureReason, "aborted") {
		t.Fatalf("after the abort: %+v, want completed, failed, abortStatus Succeeded", ms)
	}
	if d := e.daemon.Domain(domain); d == nil || !d.Info.Active() {
		t.Errorf("the guest does not run on the source any more: %+v", d)
	}
}

func TestMigrationAbortBeforeTheTransfer(t *testing.T) {
	e := startRunning(t)
	e.migrateTo()
	e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.MigrationState.AbortRequested = true })
	e.sync()
	ms := e.migrationState()
	if !ms.Completed || !ms.Failed || ms.AbortStatus != kubevirtv1.MigrationAbortSucceeded || ms.StartTimestamp != nil {
		t.Fatalf("%+v, want completed, failed, abort succeeded, never started", ms)
	}
	if hasCall(e.daemon.Calls(), "Migrate") {
		t.Errorf("libvirt was asked to migrate: %v", e.daemon.Calls())
	}
}

func TestMigrationWaitsForTheTarget(t *testing.T) {
	e := startRunning(t)
	e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) {
		v.Status.MigrationState = &kubevirtv1.VirtualMachineInstanceMigrationState{
			MigrationUID: migrationUID, SourceNode: node, TargetNode: otherNode, TargetPod: "virt-launcher-vm-target",
		}
	})
	e.sync()
	if ms := e.migrationState(); ms.StartTimestamp != nil || hasCall(e.daemon.Calls(), "Migrate") {
		t.Fatalf("started without the target's address: %+v, calls %v", ms, e.daemon.Calls())
	}
	// The usual status keeps flowing meanwhile.
	if st := e.getVMI().Status; st.Phase != kubevirtv1.Running {
		t.Errorf("phase %s", st.Phase)
	}
}

func TestMigrationTimeouts(t *testing.T) {
	tests := []struct {
		name     string
		cfg      func(*MigrationConfig)
		progress func(i uint64) virt.JobStats
		want     string
	}{{
		name:     "no progress",
		cfg:      func(c *MigrationConfig) { c.ProgressTimeout = 100 * time.Millisecond },
		progress: func(uint64) virt.JobStats { return virt.JobStats{DataRemaining: 1 << 20} },
		want:     "progress timeout",
	}, {
		name: "too long although progressing",
		cfg:  func(c *MigrationConfig) { c.CompletionTimeoutPerGiB = 200 * time.Millisecond },
		progress: func(i uint64) virt.JobStats {
			return virt.JobStats{DataRemaining: 1<<30 - i*4096, DataProcessed: i * 4096}
		},
		want: "completion timeout",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.cfg(&e.agent.source.cfg)
			e.addVMI(scheduledVMI())
			e.addLauncher(true)
			e.sync()
			e.sync()
			_, started := e.blockMigrations(true)
			e.migrateTo()
			e.sync()
			<-started
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for i := uint64(1); ; i++ {
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
						e.daemon.SetJobStats(domain, tt.progress(i))
					}
				}
			}()
			e.waitTransferEnded()
			e.sync()
			ms := e.migrationState()
			if !ms.Completed || !ms.Failed || !strings.Contains(ms.FailureReason, tt.want) {
				t.Fatalf("%+v, want failed with %q", ms, tt.want)
			}
			if ms.AbortStatus != "" {
				t.Errorf("abortStatus %q without an abort request", ms.AbortStatus)
			}
		})
	}
}

// TestMigrationWithSharedClaims: a guest whose only claim is ReadWriteMany (the launcher pod says
// so) is LiveMigratable, and its transfer leaves that disk in place, flagged for libvirt.
func TestMigrationWithSharedClaims(t *testing.T) {
	e := newEnv(t)
	vmi := scheduledVMI()
	vmi.Spec.Volumes = append(vmi.Spec.Volumes, kubevirtv1.Volume{Name: "rwx", VolumeSource: kubevirtv1.VolumeSource{
		PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{}}})
	e.addVMI(vmi)
	e.addLauncher(true)
	obj, _, _ := e.pods.GetByKey(ns + "/virt-launcher-vm-abcde")
	pod := obj.(*corev1.Pod).DeepCopy()
	pod.Annotations = map[string]string{launcherpod.SharedVolumesAnnotation: "rwx"}
	if err := e.pods.Update(pod); err != nil {
		t.Fatal(err)
	}
	e.sync()
	e.sync()
	if c := e.condition(kubevirtv1.VirtualMachineInstanceIsMigratable); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("LiveMigratable %+v, want True for a ReadWriteMany claim", c)
	}
	release, started := e.blockMigrations(false)
	e.migrateTo()
	e.sync()
	select {
	case p := <-started:
		if !p.SharedDisks {
			t.Errorf("migration parameters %+v, want SharedDisks", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("libvirt was not asked to migrate")
	}
	release(nil)
}
