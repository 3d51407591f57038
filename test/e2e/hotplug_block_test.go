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
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// TestHotplugBlockVolume hotplugs a Block claim into the running demo guest: a static `local`
// PersistentVolume in Block mode on the instance's node, backed by a loop device the test makes
// (the local-path provisioner has no Block mode). The guest writes to the new virtio disk, the
// loop device's backing file holds what it wrote, the disk is unplugged and the guest sees it go;
// the guest never restarts. The test removes the VM, the claim, the volume and the loop device.
func TestHotplugBlockVolume(t *testing.T) {
	e := newCtrlEnv(t, "e2e-hotplug-block")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	vm := e.demoVM(kubevirtv1.RunStrategyAlways)
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi, pod := f.running(demoVM, "")

	backing := filepath.Join(t.TempDir(), "block.img")
	if err := os.WriteFile(backing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(backing, pvcSize); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", backing).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v: %s", err, out)
	}
	loop := strings.TrimSpace(string(out))
	t.Logf("loop device %s on %s", loop, backing)
	pvName := "nv-hotplug-block-" + e.ns
	t.Cleanup(func() { removeBlockPV(t, e, pvName, loop) })

	node, err := e.kube.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	block := corev1.PersistentVolumeBlock
	size := *resource.NewQuantity(pvcSize, resource.BinarySI)
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode:                    &block,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			ClaimRef:                      &corev1.ObjectReference{Namespace: e.ns, Name: "blk"},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: loop}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn,
					Values: []string{node.Labels[corev1.LabelHostname]}}},
			}}}},
		},
	}
	if _, err := e.kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	empty := ""
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "blk", Namespace: e.ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode:       &block,
			StorageClassName: &empty,
			VolumeName:       pvName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	s := f.promptedConsole(demoVM)
	defer func() { s.close() }()
	s.send(`echo boot=$(cat /proc/sys/kernel/random/boot_id)`)
	m := s.expect(bootIDRE, time.Minute, false)
	if m == nil {
		t.Fatalf("no boot id from the guest:\n%s", s.all())
	}
	boot := m[1]

	f.cli.run("addvolume", demoVM, "--volume-name=blk", "--serial=nvblk", "--bus=virtio")
	f.volumeReady(demoVM, "blk")
	dev := f.guestDisk(s, "nvblk")
	marker := fmt.Sprintf("nv-hotplug-block-%d", rand.IntN(1<<30))
	s.send(fmt.Sprintf("echo %s > /dev/%s && sync && echo written-$((1+1))", marker, dev))
	if s.expect(regexp.MustCompile(`(?m)^written-2`), time.Minute, false) == nil {
		t.Fatalf("writing to /dev/%s failed:\n%s", dev, s.all())
	}
	f.guestReads(s, dev, marker)
	f.fileHas(backing, marker)

	f.cli.run("removevolume", demoVM, "--volume-name=blk")
	f.guestDiskGone(s, "nvblk")
	f.waitFor("the attachment pod of blk gone", hotplugTimeout, func() (bool, error) {
		_, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, "hp-volume-"+demoVM+"-blk", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
	s.send(`echo boot=$(cat /proc/sys/kernel/random/boot_id)`)
	if m := s.expect(bootIDRE, time.Minute, false); m == nil || m[1] != boot {
		t.Errorf("the guest restarted (boot id %v, was %s):\n%s", m, boot, s.all())
	}
	if v, err := f.vmi(demoVM); err != nil || v.UID != vmi.UID {
		t.Errorf("the instance was replaced: %v", err)
	}
}

// removeBlockPV deletes the test's VM (and so every pod using the claim), the claim and the
// volume, waits until the kubelet let go of the device (it holds a loop device of its own on a
// mapped block volume while a pod uses it), then detaches the test's loop device.
func removeBlockPV(t *testing.T, e *ctrlEnv, pvName, loop string) {
	ctx := context.Background()
	_ = e.kv.KubevirtV1().VirtualMachines(e.ns).Delete(ctx, demoVM, metav1.DeleteOptions{})
	_ = e.kube.CoreV1().Pods(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	e.wait("the test namespace's pods gone", func() (bool, error) {
		pods, err := e.kube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0, err
	})
	_ = e.kube.CoreV1().PersistentVolumeClaims(e.ns).Delete(ctx, "blk", metav1.DeleteOptions{})
	_ = e.kube.CoreV1().PersistentVolumes().Delete(ctx, pvName, metav1.DeleteOptions{})
	e.wait("no loop device on the kubelet's map of "+pvName, func() (bool, error) {
		out, err := exec.Command("losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE").CombinedOutput()
		return err == nil && !strings.Contains(string(out), pvName), fmt.Errorf("%v: %s", err, out)
	})
	if out, err := exec.Command("losetup", "--detach", loop).CombinedOutput(); err != nil {
		t.Errorf("losetup --detach %s: %v: %s", loop, err, out)
	}
}
