package agent

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/streamserver"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

const (
	targetPodName = "virt-launcher-vm-target"
	targetPodUID  = types.UID("bbbbbbbb-cccc-dddd-eeee-ffffffffffff")
	sourceNode    = "node-0"
)

// incomingVMI is a VMI running on sourceNode whose migration targets this
// node, as the target agent's label-selected informer delivers it.
func incomingVMI() *kubevirtv1.VirtualMachineInstance {
	vmi := scheduledVMI()
	vmi.Labels = map[string]string{kubevirtv1.MigrationTargetNodeNameLabel: node}
	vmi.Spec.Domain.Devices.Disks = []kubevirtv1.Disk{{Name: "root"}, {Name: "scratch"}, {Name: "ci"}}
	vmi.Spec.Volumes = []kubevirtv1.Volume{
		{Name: "root", VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: "img"}}},
		{Name: "scratch", VolumeSource: kubevirtv1.VolumeSource{EmptyDisk: &kubevirtv1.EmptyDiskSource{Capacity: resource.MustParse("16Mi")}}},
		{Name: "ci", VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{UserData: "#!/bin/sh\n"}}},
	}
	vmi.Status.Phase, vmi.Status.NodeName = kubevirtv1.Running, sourceNode
	vmi.Status.MigrationState = &kubevirtv1.VirtualMachineInstanceMigrationState{
		MigrationUID: migrationUID, Mode: kubevirtv1.MigrationPreCopy,
		SourceNode: sourceNode, SourcePod: "virt-launcher-vm-abcde", TargetNode: node, TargetPod: targetPodName,
	}
	return vmi
}

// targetEnv has the incoming VMI and its target launcher pod (with the
// containerDisk copied by the pod's init container).
func targetEnv(t *testing.T, ready bool) *env {
	t.Helper()
	e := newEnv(t)
	e.addVMI(incomingVMI())
	e.addPod(targetPodName, targetPodUID, "10.244.1.9", ready)
	disks := podfs.Locator{KubeletRoot: e.root}.EmptyDir(targetPodUID, podfs.DisksVolume)
	if err := os.MkdirAll(filepath.Join(disks, "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(disks, "root", DiskImage), make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) targetDir(volume, rel string) string {
	return filepath.Join(podfs.Locator{KubeletRoot: e.root}.EmptyDir(targetPodUID, volume), rel)
}

func TestMigrationTargetPreparesAndDetects(t *testing.T) {
	e := targetEnv(t, false)
	nets := recordNetwork(e, nil)
	seeded, _ := recordSeeding(e, nil)
	if after := e.sync(); after != waitForLauncher {
		t.Errorf("requeue after %v while the target launcher is not ready, want %v", after, waitForLauncher)
	}
	if ms := e.migrationState(); ms.TargetNodeAddress != "" {
		t.Fatalf("address published before the target launcher is ready: %+v", ms)
	}
	e.markPodReady(targetPodUID)
	e.sync()
	ms := e.migrationState()
	if ms.TargetNodeAddress != targetEndpoint {
		t.Fatalf("targetNodeAddress %q, want %q", ms.TargetNodeAddress, targetEndpoint)
	}
	// The target pod's network, as for a start: the incoming QEMU opens its tap device.
	if b, err := os.ReadFile(e.targetDir(podfs.PrivateVolume, "network-prepared")); len(*nets) != 1 || err != nil || string(b) != vmName {
		t.Errorf("network preparations %+v (%v), want one in the target pod %s", *nets, err, targetPodUID)
	}
	// The incoming migration needs libvirt's QEMU capabilities as a define does.
	if len(*seeded) != 1 {
		t.Errorf("%d capability seedings of the target launcher before the address was published, want 1", len(*seeded))
	}
	// The same disk files as a start, without a domain.
	if diff := cmp.Diff([]string{".overlay.qcow2.tmp over disk.img (raw)"}, e.overlays); diff != "" {
		t.Errorf("overlays (-want +got):\n%s", diff)
	}
	for _, f := range []string{e.targetDir(podfs.DisksVolume, "root/overlay.qcow2"), e.targetDir(podfs.DisksVolume, "scratch/disk.img"),
		e.targetDir(podfs.DisksVolume, "ci/cloudinit.iso"), e.targetDir(podfs.PrivateVolume, MigrationDir)} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("target preparation: %v", err)
		}
	}
	if st, _ := os.Stat(e.targetDir(podfs.DisksVolume, "scratch/disk.img")); st == nil || st.Size() != 16<<20 {
		t.Errorf("emptyDisk on the target: %+v", st)
	}
	for _, c := range e.daemon.Calls() {
		if c != "Dial" {
			t.Errorf("libvirt call %q on the target before the migration", c)
		}
	}
	if st := e.getVMI().Status; st.NodeName != sourceNode || st.Phase != kubevirtv1.Running {
		t.Errorf("the target changed more than the migration state: %+v", st)
	}

	// The incoming domain exists but is paused until the switch-over.
	xml := []byte(`<domain><name>` + domain + `</name><metadata><nv:vmi xmlns:nv="urn:nv"><nv:uid>` + string(vmUID) + `</nv:uid></nv:vmi></metadata></domain>`)
	e.daemon.AddDomain(domain, xml, virt.StatePaused, virt.ReasonMigration)
	e.sync()
	if ms := e.migrationState(); ms.TargetNodeDomainDetected {
		t.Fatal("detected while the incoming domain is paused for the migration")
	}
	e.daemon.SetState(domain, virt.StateRunning, virt.ReasonMigrated)
	e.sync()
	ms = e.migrationState()
	if !ms.TargetNodeDomainDetected || ms.TargetNodeDomainReadyTimestamp == nil {
		t.Fatalf("%+v, want the guest detected with a ready time", ms)
	}

	// The source completes, the controller hands over: from now on this is
	// the usual per-node path, on the target pod, without any start.
	e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) {
		v.Status.MigrationState.Completed = true
		v.Status.NodeName = node
		delete(v.Labels, kubevirtv1.MigrationTargetNodeNameLabel)
	})
	e.sync()
	st := e.getVMI().Status
	if st.Phase != kubevirtv1.Running || len(st.Interfaces) != 1 || st.Interfaces[0].IP != "10.244.1.9" {
		t.Errorf("after the handover: phase %s interfaces %+v, want Running on the target pod's IP", st.Phase, st.Interfaces)
	}
	if hasCall(e.daemon.Calls(), "Define ") || hasCall(e.daemon.Calls(), "Start ") {
		t.Errorf("the target defined or started the migrated domain: %v", e.daemon.Calls())
	}
	if err := e.agent.commands.Pause(context.Background(), ns, vmName, vmUID); err != nil {
		t.Fatalf("pause after the handover: %v", err)
	}
	if _, err := e.agent.guest.Console(context.Background(), ns, vmName, vmUID); err != nil {
		t.Errorf("console after the handover: %v", err)
	}
	rec, ok := e.agent.store.Get(vmUID)
	if !ok || rec.PodUID != targetPodUID || !rec.Started {
		t.Errorf("checkpoint %+v, want the adopted domain of the target pod", rec)
	}
}

func TestMigrationTargetIgnoresOtherPods(t *testing.T) {
	e := targetEnv(t, true)
	e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) {
		v.Status.MigrationState.TargetPod = "virt-launcher-vm-elsewhere"
	})
	e.sync()
	if ms := e.migrationState(); ms.TargetNodeAddress != "" {
		t.Errorf("prepared a pod that is not the migration's target: %+v", ms)
	}
	if len(e.overlays) != 0 {
		t.Errorf("disks prepared: %v", e.overlays)
	}
}

func TestMigrationTunnelBackend(t *testing.T) {
	e := targetEnv(t, true)
	ctx := context.Background()
	if _, err := e.agent.target.MigrationTunnel(ctx, migrationUID, streams.ChannelLibvirt); !errors.Is(err, streamserver.ErrConflict) {
		t.Errorf("tunnel before the target is prepared: %v, want a conflict", err)
	}
	e.sync() // prepares
	if _, err := e.agent.target.MigrationTunnel(ctx, "another-migration", streams.ChannelLibvirt); !errors.Is(err, streamserver.ErrNotFound) {
		t.Errorf("tunnel of a migration this node is not the target of: %v, want not found", err)
	}

	private, err := podfs.Open(e.targetDir(podfs.PrivateVolume, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer private.Close()
	serve := func(rel, greeting string) net.Listener {
		if err := os.MkdirAll(filepath.Dir(private.Path(rel)), 0o700); err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("unix", private.Path(rel))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				_, _ = io.WriteString(c, greeting)
				_ = c.Close()
			}
		}()
		return l
	}
	serve(podfs.LibvirtSocket, "libvirtd")
	read := func(ch streams.MigrationChannel) string {
		t.Helper()
		c, err := e.agent.target.MigrationTunnel(ctx, migrationUID, ch)
		if err != nil {
			t.Fatalf("%s tunnel: %v", ch, err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(c)
		return string(b)
	}
	if got := read(streams.ChannelLibvirt); got != "libvirtd" {
		t.Errorf("libvirt channel reached %q, want the target launcher's libvirt socket", got)
	}
	// The target QEMU listens a moment after the source asked for it: once the first attempt
	// found no socket.
	redials := 0
	e.agent.target.redial = func(context.Context) error {
		if redials++; redials == 1 {
			serve(MigrationDir+"/qemu.sock", "qemu")
		}
		return nil
	}
	if got := read(streams.ChannelQEMU); got != "qemu" || redials != 1 {
		t.Errorf("qemu channel reached %q after %d redials, want qemu after 1", got, redials)
	}

	e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.MigrationState.Completed = true })
	if _, err := e.agent.target.MigrationTunnel(ctx, migrationUID, streams.ChannelLibvirt); !errors.Is(err, streamserver.ErrConflict) {
		t.Errorf("tunnel after the migration completed: %v, want a conflict", err)
	}
}

func TestMigrationTargetClosesTunnelsWhenOver(t *testing.T) {
	e := targetEnv(t, true)
	e.sync()
	private, err := podfs.Open(e.targetDir(podfs.PrivateVolume, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer private.Close()
	if err := os.MkdirAll(filepath.Dir(private.Path(podfs.LibvirtSocket)), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", private.Path(podfs.LibvirtSocket))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			_, _ = io.Copy(io.Discard, c) // holds the connection open
		}
	}()
	c, err := e.agent.target.MigrationTunnel(context.Background(), migrationUID, streams.ChannelLibvirt)
	if err != nil {
		t.Fatal(err)
	}
	e.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) {
		v.Status.MigrationState.Completed, v.Status.MigrationState.Failed = true, true
	})
	e.sync()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the tunnel is still open after the migration failed: %v", err)
	}
}

func TestLiveMigratableCondition(t *testing.T) {
	tests := []struct {
		name   string
		mod    func(*kubevirtv1.VirtualMachineInstance)
		want   corev1.ConditionStatus
		reason string
	}{
		{"containerDisk, emptyDisk and cloud-init", func(v *kubevirtv1.VirtualMachineInstance) { v.Spec.Volumes = incomingVMI().Spec.Volumes }, corev1.ConditionTrue, ""},
		{"hostDisk", func(v *kubevirtv1.VirtualMachineInstance) {
			v.Spec.Volumes = []kubevirtv1.Volume{{Name: "h", VolumeSource: kubevirtv1.VolumeSource{HostDisk: &kubevirtv1.HostDisk{Path: "/data/d.img"}}}}
		}, corev1.ConditionFalse, ReasonDisksNotLiveMigratable},
		{"claim", func(v *kubevirtv1.VirtualMachineInstance) {
			v.Spec.Volumes = []kubevirtv1.Volume{{Name: "c", VolumeSource: kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{}}}}
		}, corev1.ConditionFalse, ReasonDisksNotLiveMigratable},
		{"shared (ReadWriteMany) claim", func(v *kubevirtv1.VirtualMachineInstance) {
			v.Spec.Volumes = []kubevirtv1.Volume{{Name: "rwx", VolumeSource: kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{}}}}
		}, corev1.ConditionTrue, ""},
		{"DataVolume on a local claim", func(v *kubevirtv1.VirtualMachineInstance) {
			v.Spec.Volumes = []kubevirtv1.Volume{{Name: "c", VolumeSource: kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "dv"}}}}
		}, corev1.ConditionFalse, ReasonDisksNotLiveMigratable},
		{"DataVolume on a shared (ReadWriteMany) claim", func(v *kubevirtv1.VirtualMachineInstance) {
			v.Spec.Volumes = []kubevirtv1.Volume{{Name: "rwx", VolumeSource: kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "dv"}}}}
		}, corev1.ConditionTrue, ""},
		{"a shared and a local claim", func(v *kubevirtv1.VirtualMachineInstance) {
			v.Spec.Volumes = []kubevirtv1.Volume{
				{Name: "rwx", VolumeSource: kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{}}},
				{Name: "c", VolumeSource: kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{}}}}
		}, corev1.ConditionFalse, ReasonDisksNotLiveMigratable},
		{"bridge binding on the pod network", func(v *kubevirtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}
		}, corev1.ConditionFalse, ReasonInterfaceNotLiveMigratable},
		{"bridge binding on a Multus network", func(v *kubevirtv1.VirtualMachineInstance) {
			v.Spec.Networks = append(v.Spec.Networks, kubevirtv1.Network{Name: "blue",
				NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "blue-net"}}})
			v.Spec.Domain.Devices.Interfaces = append(v.Spec.Domain.Devices.Interfaces, kubevirtv1.Interface{Name: "blue",
				InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}})
		}, corev1.ConditionTrue, ""},
	}
	for _, tt := range tests {
		v := scheduledVMI()
		tt.mod(v)
		c := liveMigratable(v, map[string]bool{"rwx": true})
		if c.Status != tt.want || c.Reason != tt.reason || (tt.want == corev1.ConditionFalse && c.Message == "") {
			t.Errorf("%s: %+v, want %s %s with a message", tt.name, c, tt.want, tt.reason)
		}
	}
}
