/*
Copyright The NativeVirt Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// pvcSize is the claim of TestPersistentVolumeClaimDisk: 64 MiB, 131072 sectors in the guest.
const pvcSize = 64 << 20

// TestPersistentVolumeClaimDisk gives the demo VM a second disk on a filesystem-mode claim (a
// statically bound hostPath PersistentVolume): the launcher creates the claim's disk.img sized to
// the claim, the guest sees a 64 MiB disk, and what the guest writes to it lands in the file on
// the volume.
func TestPersistentVolumeClaimDisk(t *testing.T) {
	e := newCtrlEnv(t, "e2e-pvc")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	hostDir := e.hostPathClaim("data", corev1.ReadWriteOnce)

	vm := e.demoVM(kubevirtv1.RunStrategyAlways)
	withClaimDisk(vm, "data")
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi, pod := f.running(demoVM, "")
	if len(pod.Spec.Containers) == 0 || !hasMount(pod.Spec.Containers[0], "data", "/var/run/nativevirt-pvcs/data") {
		t.Errorf("launcher pod %s does not mount claim volume data at /var/run/nativevirt-pvcs/data", pod.Name)
	}
	image := filepath.Join(hostDir, "disk.img")
	if st, err := os.Stat(image); err != nil || st.Size() != pvcSize {
		t.Fatalf("disk image on the volume: %v (size %v), want %d bytes", err, st, pvcSize)
	}

	// In the guest: the disk with serial nvdata has 131072 sectors; a marker written to it
	// reaches the file on the volume.
	s := f.cli.console(demoVM)
	defer s.close()
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		t.Fatalf("console of %s: no shell prompt:\n%s", vmi.Name, s.all())
	}
	s.send(claimDiskScript)
	m := s.expect(claimDiskRE, time.Minute, false)
	if m == nil {
		t.Fatalf("no disk with serial nvdata in the guest:\n%s", s.all())
	}
	if want := fmt.Sprint(pvcSize / 512); m[2] != want {
		t.Errorf("guest disk %s has %s sectors, want %s", m[1], m[2], want)
	}
	marker := fmt.Sprintf("nv-pvc-%d", rand.IntN(1<<30))
	s.send(fmt.Sprintf("echo %s > /dev/%s && sync && echo written-$((1+1))", marker, m[1]))
	if s.expect(regexp.MustCompile(`(?m)^written-2`), time.Minute, false) == nil {
		t.Fatalf("writing to /dev/%s failed:\n%s", m[1], s.all())
	}
	f.fileHas(image, marker)
	t.Logf("guest disk /dev/%s (%s sectors) on claim data; marker %q found in %s", m[1], m[2], marker, image)

	// A ReadWriteOnce claim cannot follow the guest to another node: LiveMigratable is False
	// with the reason, and a migration is refused with it.
	f.waitFor("LiveMigratable=False (DisksNotLiveMigratable)", controllerTimeout, func() (bool, error) {
		v, err := f.vmi(demoVM)
		if err != nil {
			return false, err
		}
		for _, c := range v.Status.Conditions {
			if c.Type == kubevirtv1.VirtualMachineInstanceIsMigratable {
				return c.Status == corev1.ConditionFalse && c.Reason == "DisksNotLiveMigratable", fmt.Errorf("%s %s", c.Status, c.Reason)
			}
		}
		return false, fmt.Errorf("no LiveMigratable condition")
	})
	out, err := f.cli.command(ctx, "migrate", demoVM).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Cannot migrate VMI") || !strings.Contains(string(out), "DisksNotLiveMigratable") {
		t.Errorf("nativevirt migrate of a VM on a ReadWriteOnce claim: err %v, output %q; want a refusal naming DisksNotLiveMigratable", err, out)
	}
	t.Logf("$ nativevirt migrate %s\n%s", demoVM, indentLines(strings.TrimSpace(string(out))))
}

// hostPathClaim creates a PersistentVolume on a fresh directory of this machine (every node of
// the local cluster runs here, so it stands in for shared storage too) and a claim named name in
// the test's namespace bound to it, 64 MiB, with the access mode given. It returns the directory.
func (e *ctrlEnv) hostPathClaim(name string, mode corev1.PersistentVolumeAccessMode) string {
	e.t.Helper()
	hostDir, pvName := e.hostPathPV(name, mode)
	size := *resource.NewQuantity(pvcSize, resource.BinarySI)
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{mode},
			StorageClassName: ptrTo(manualClass),
			VolumeName:       pvName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Create(context.Background(), pvc, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	return hostDir
}

// manualClass is the class of the PersistentVolumes of hostPathPV (no StorageClass object: the
// claims name their volume).
const manualClass = "nativevirt-e2e-manual"

// hostPathPV creates a 64 MiB PersistentVolume of class manualClass with the access mode given on
// a fresh directory of this machine, for a claim named name; it returns the directory and the
// volume's name.
func (e *ctrlEnv) hostPathPV(name string, mode corev1.PersistentVolumeAccessMode) (string, string) {
	e.t.Helper()
	ctx := context.Background()
	hostDir, err := os.MkdirTemp("", "nativevirt-e2e-pv-")
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = os.RemoveAll(hostDir) })
	pvName := e.ns + "-" + name
	size := *resource.NewQuantity(pvcSize, resource.BinarySI)
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{mode},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              manualClass,
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: hostDir, Type: ptrTo(corev1.HostPathDirectory)}},
		},
	}
	if _, err := e.kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = e.kube.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{})
	})
	return hostDir, pvName
}

// withClaimDisk adds a virtio disk with serial nvdata on claim `claim` to the VM's template.
func withClaimDisk(vm *kubevirtv1.VirtualMachine, claim string) {
	tmpl := &vm.Spec.Template.Spec
	tmpl.Domain.Devices.Disks = append(tmpl.Domain.Devices.Disks, kubevirtv1.Disk{Name: "data", Serial: "nvdata",
		DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}})
	tmpl.Volumes = append(tmpl.Volumes, kubevirtv1.Volume{Name: "data", VolumeSource: kubevirtv1.VolumeSource{
		PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
			PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}})
}

// claimDiskScript prints "nvdisk=<device> sectors=<n>" for the guest's disk with serial nvdata.
const claimDiskScript = `for d in /sys/block/vd*; do [ "$(cat $d/serial 2>/dev/null)" = nvdata ] && echo "nvdisk=${d##*/} sectors=$(cat $d/size)"; done`

var claimDiskRE = regexp.MustCompile(`nvdisk=(vd[a-z]+) sectors=(\d+)`)

// fileHas polls until the first 4 KiB of path contain marker.
func (f *flow) fileHas(path, marker string) {
	f.t.Helper()
	f.waitFor("marker "+marker+" in "+path, time.Minute, func() (bool, error) {
		head := make([]byte, 4096)
		fh, err := os.Open(path)
		if err != nil {
			return false, err
		}
		defer fh.Close()
		n, _ := fh.Read(head)
		return bytes.Contains(head[:n], []byte(marker)), nil
	})
}

func hasMount(c corev1.Container, name, path string) bool {
	for _, m := range c.VolumeMounts {
		if m.Name == name && m.MountPath == path {
			return true
		}
	}
	return false
}

func ptrTo[T any](v T) *T { return &v }
