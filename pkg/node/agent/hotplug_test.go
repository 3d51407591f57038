package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/virt/fake"
)

const hotplugDomainXML = `<domain type="qemu"><name>ns_vm</name><devices>` +
	`<disk type="file" device="disk"><source file="/disks/root.img"></source><target dev="vda" bus="virtio"></target><alias name="ua-root"></alias></disk>` +
	`</devices></domain>`

// hotplugFixture is a running fake domain, an instance with a hotplugged volume hot, and its
// attachment pod whose container root is a temporary directory.
type hotplugFixture struct {
	daemon *fake.Daemon
	l      *launcher
	vmi    *kubevirtv1.VirtualMachineInstance
	pods   cache.Indexer
	root   string
	events []string
	h      *hotplugger
}

func newHotplugFixture(t *testing.T) *hotplugFixture {
	t.Helper()
	f := &hotplugFixture{daemon: fake.NewDaemon(), root: t.TempDir(),
		pods: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}
	conn, err := f.daemon.Dial("")
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Define([]byte(hotplugDomainXML)); err != nil {
		t.Fatal(err)
	}
	if err := conn.Start("ns_vm", false); err != nil {
		t.Fatal(err)
	}
	f.l = &launcher{domain: "ns_vm", conn: conn, podUID: "launcher-uid"}
	f.vmi = &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "vmi-uid"}}
	f.vmi.Status.Phase = kubevirtv1.Running
	f.vmi.Spec.Domain.Devices.Disks = []kubevirtv1.Disk{{Name: "root"}, {Name: "hot", Serial: "S",
		DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}}}
	f.vmi.Spec.Volumes = []kubevirtv1.Volume{{Name: "root"}, {Name: "hot", VolumeSource: kubevirtv1.VolumeSource{
		PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{Hotpluggable: true,
			PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "hot-pvc"}}}}}
	if err := os.MkdirAll(filepath.Join(f.root, launcherpod.HotplugMountDir, "hot"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.h = &hotplugger{
		pods: corelisters.NewPodLister(f.pods),
		containerRoot: func(uid types.UID, probe string) (string, error) {
			switch uid {
			case "attach-uid":
				return f.root, nil
			case "launcher-uid":
				return filepath.Join(f.root, "launcher"), nil
			}
			return "", errors.New("unknown pod")
		},
		report: reporter{record: func(_ *kubevirtv1.VirtualMachineInstance, _, reason, msg string) {
			f.events = append(f.events, reason+": "+msg)
		}},
	}
	return f
}

func (f *hotplugFixture) attachmentPod(t *testing.T, phase corev1.PodPhase) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: launcherpod.AttachmentPodName(f.vmi, "hot"), Namespace: "ns", UID: "attach-uid",
		Annotations: map[string]string{launcherpod.HotplugSizeAnnotation: "1048576", launcherpod.HotplugBlockAnnotation: "false"}},
		Status: corev1.PodStatus{Phase: phase}}
	if err := f.pods.Update(pod); err != nil {
		t.Fatal(err)
	}
}

var launcherWithRoot = &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "root"}}}}

func TestHotplugPlugAndUnplug(t *testing.T) {
	f := newHotplugFixture(t)
	ctx := context.Background()

	// No attachment pod yet: Pending, nothing attached.
	res := f.h.sync(ctx, f.vmi, launcherWithRoot, f.l)
	if st := res.status["hot"]; st.Phase != kubevirtv1.VolumePending || st.HotplugVolume == nil || !res.retry {
		t.Fatalf("without attachment pod: %+v (retry %v), want Pending", st, res.retry)
	}
	f.attachmentPod(t, corev1.PodPending)
	if st := f.h.sync(ctx, f.vmi, launcherWithRoot, f.l).status["hot"]; st.Phase != kubevirtv1.VolumePending {
		t.Fatalf("attachment pod pending: %+v, want Pending", st)
	}

	// Running: the image is created sparse with the claim's size and plugged in.
	f.attachmentPod(t, corev1.PodRunning)
	res = f.h.sync(ctx, f.vmi, launcherWithRoot, f.l)
	st := res.status["hot"]
	if st.Phase != kubevirtv1.HotplugVolumeMounted || st.Target != "vdb" || st.HotplugVolume.AttachPodUID != "attach-uid" {
		t.Fatalf("plugged: %+v, want MountedToPod on vdb", st)
	}
	if fi, err := os.Stat(filepath.Join(f.root, launcherpod.HotplugImage("hot"))); err != nil || fi.Size() != 1048576 {
		t.Errorf("disk image: %v %v, want 1 MiB", fi, err)
	}
	dom := f.daemon.Domain("ns_vm")
	for _, want := range []string{`fdgroup="hp-hot"`, `<alias name="ua-hot">`, `<serial>S</serial>`} {
		if !strings.Contains(string(dom.XML), want) {
			t.Errorf("domain XML lacks %s:\n%s", want, dom.XML)
		}
	}
	// Next sync (or after an agent restart: no state but the domain's): Ready, nothing attached again.
	f.l.details.Store(nil)
	f.daemon.ResetCalls()
	if st := f.h.sync(ctx, f.vmi, launcherWithRoot, f.l).status["hot"]; st.Phase != kubevirtv1.VolumeReady || st.Target != "vdb" {
		t.Fatalf("after plugging: %+v, want Ready on vdb", st)
	}
	for _, c := range f.daemon.Calls() {
		if strings.HasPrefix(c, "AttachDisk") {
			t.Errorf("a plugged disk was attached again: %v", f.daemon.Calls())
		}
	}

	// Removed from the spec: detached; Detaching until the domain lets go, then no entry.
	f.vmi.Spec.Volumes = f.vmi.Spec.Volumes[:1]
	f.vmi.Spec.Domain.Devices.Disks = f.vmi.Spec.Domain.Devices.Disks[:1]
	res = f.h.sync(ctx, f.vmi, launcherWithRoot, f.l)
	if st := res.status["hot"]; st.Phase != kubevirtv1.HotplugVolumeDetaching || !res.retry {
		t.Fatalf("removed: %+v, want Detaching", st)
	}
	if strings.Contains(string(f.daemon.Domain("ns_vm").XML), "ua-hot") {
		t.Error("the disk is still in the domain")
	}
	if res := f.h.sync(ctx, f.vmi, launcherWithRoot, f.l); len(res.status) != 0 {
		t.Errorf("after the unplug: %+v, want no hotplug entries", res.status)
	}
	want := []string{EventVolumeHotplugged, EventVolumeUnplugged}
	if len(f.events) != 2 || !strings.HasPrefix(f.events[0], want[0]) || !strings.HasPrefix(f.events[1], want[1]) {
		t.Errorf("events %v, want %v", f.events, want)
	}
}

func TestHotplugFromTheStartIsTheLaunchers(t *testing.T) {
	f := newHotplugFixture(t)
	launcher := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "root"}, {Name: "hot"}}}}
	if res := f.h.sync(context.Background(), f.vmi, launcher, f.l); len(res.status) != 0 {
		t.Errorf("a hotpluggable claim of the launcher pod: %+v, want it left to the launcher", res.status)
	}
}

func TestMergeHotplugStatus(t *testing.T) {
	list := []kubevirtv1.VolumeStatus{{Name: "root", Target: "vda"}, {Name: "hot"}}
	got := mergeHotplugStatus(list, map[string]kubevirtv1.VolumeStatus{
		"hot": {Name: "hot", Phase: kubevirtv1.VolumeReady}, "gone": {Name: "gone", Phase: kubevirtv1.HotplugVolumeDetaching}})
	if len(got) != 3 || got[1].Phase != kubevirtv1.VolumeReady || got[2].Name != "gone" {
		t.Errorf("merged %+v", got)
	}
}

// A DataVolume's disk waits for its importer's disk.img (no sparse image is made in its place),
// then is plugged in like a claim's.
func TestHotplugDataVolumeWaitsForImport(t *testing.T) {
	f := newHotplugFixture(t)
	ctx := context.Background()
	f.vmi.Spec.Volumes[1].VolumeSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "hot-dv", Hotpluggable: true}}
	f.attachmentPod(t, corev1.PodRunning)
	res := f.h.sync(ctx, f.vmi, launcherWithRoot, f.l)
	st := res.status["hot"]
	if st.Phase != kubevirtv1.VolumePending || st.Reason != "DataVolumeNotReady" || !res.retry || st.PersistentVolumeClaimInfo.ClaimName != "hot-dv" {
		t.Fatalf("before the import: %+v (retry %v), want Pending DataVolumeNotReady of claim hot-dv", st, res.retry)
	}
	img := filepath.Join(f.root, launcherpod.HotplugImage("hot"))
	if _, err := os.Stat(img); !os.IsNotExist(err) {
		t.Fatalf("an image was made in the DataVolume's claim: %v", err)
	}
	if err := os.WriteFile(img, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	if st := f.h.sync(ctx, f.vmi, launcherWithRoot, f.l).status["hot"]; st.Phase != kubevirtv1.HotplugVolumeMounted || st.Target != "vdb" {
		t.Fatalf("after the import: %+v, want MountedToPod on vdb", st)
	}
}

// fakeDevices records the block devices given to and taken from launchers.
type fakeDevices struct{ calls []string }

func (d *fakeDevices) give(attachDev, launcherRoot, name string) error {
	d.calls = append(d.calls, "give "+filepath.Base(attachDev)+" "+filepath.Base(launcherRoot)+" "+name)
	return nil
}

func (d *fakeDevices) take(launcherRoot, name string) error {
	d.calls = append(d.calls, "take "+filepath.Base(launcherRoot)+" "+name)
	return nil
}

// A block claim: its device node is given to the launcher and the disk is a block disk on it;
// unplugged, the node is taken back.
func TestHotplugBlock(t *testing.T) {
	f := newHotplugFixture(t)
	ctx := context.Background()
	devs := &fakeDevices{}
	f.h.devices = devs
	f.h.processRoot = func(uid types.UID, comm string) (string, error) {
		if uid != "launcher-uid" || comm != qemuComm {
			return "", errors.New("no such process")
		}
		return filepath.Join(f.root, "launcher"), nil
	}
	f.attachmentPod(t, corev1.PodRunning)
	pod, _ := corelisters.NewPodLister(f.pods).Pods("ns").Get(launcherpod.AttachmentPodName(f.vmi, "hot"))
	pod = pod.DeepCopy()
	pod.Annotations[launcherpod.HotplugBlockAnnotation] = "true"
	if err := f.pods.Update(pod); err != nil {
		t.Fatal(err)
	}
	st := f.h.sync(ctx, f.vmi, launcherWithRoot, f.l).status["hot"]
	if st.Phase != kubevirtv1.HotplugVolumeMounted || st.Target != "vdb" {
		t.Fatalf("plugged: %+v, want MountedToPod on vdb", st)
	}
	if want := "give hotplug-hot launcher hotplug-hot"; len(devs.calls) != 1 || devs.calls[0] != want {
		t.Errorf("device calls %v, want [%s]", devs.calls, want)
	}
	dom := string(f.daemon.Domain("ns_vm").XML)
	for _, want := range []string{`<disk type="block" device="disk">`, `<source dev="/dev/hotplug-hot">`, `<alias name="ua-hot">`} {
		if !strings.Contains(dom, want) {
			t.Errorf("domain XML lacks %s:\n%s", want, dom)
		}
	}
	if strings.Contains(dom, "fdgroup") {
		t.Errorf("a block disk with an fdgroup:\n%s", dom)
	}
	f.vmi.Spec.Volumes = f.vmi.Spec.Volumes[:1]
	f.vmi.Spec.Domain.Devices.Disks = f.vmi.Spec.Domain.Devices.Disks[:1]
	f.l.details.Store(nil)
	if st := f.h.sync(ctx, f.vmi, launcherWithRoot, f.l).status["hot"]; st.Phase != kubevirtv1.HotplugVolumeDetaching {
		t.Fatalf("removed: %+v, want Detaching", st)
	}
	if want := "take launcher hotplug-hot"; len(devs.calls) != 2 || devs.calls[1] != want {
		t.Errorf("device calls %v, want then %s", devs.calls, want)
	}
}

func TestDevicesCgroup(t *testing.T) {
	dir := t.TempDir()
	v1 := filepath.Join(dir, "v1")
	if err := os.WriteFile(v1, []byte("12:pids:/a\n5:devices:/kubepods/pod1/c1\n0::/x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := devicesCgroup(v1); err != nil || got != "/kubepods/pod1/c1" {
		t.Errorf("v1: %q %v", got, err)
	}
	v2 := filepath.Join(dir, "v2")
	if err := os.WriteFile(v2, []byte("0::/kubepods/pod1/c1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := devicesCgroup(v2); !errors.Is(err, errNoDeviceCgroup) {
		t.Errorf("v2: %v, want errNoDeviceCgroup", err)
	}
}
