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
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// hotplugTimeout bounds a volume's way into or out of the guest (an attachment pod to start, a
// claim to be provisioned, the guest to see the PCI device come or go).
const hotplugTimeout = 3 * time.Minute

var bootIDRE = regexp.MustCompile(`boot=([0-9a-f-]{36})`)

// TestHotplugVolume hotplugs a Filesystem claim of the default StorageClass (local-path,
// WaitForFirstConsumer: the attachment pod is its first consumer) into the running demo guest:
// the guest sees a new virtio disk and writes to it; the disk is unplugged and the guest sees it
// go; plugged in again through the VM (--persist) it still holds what the guest wrote, also
// after the node agent is killed. After the restart it is removed and two more come, both
// virtio at once: a claim into the instance only and a blank DataVolume through the VM (Pending
// until imported; the attachment pod is its first consumer). The guest never restarts. At the
// VM's next start the instance has the VM's DataVolume and not the instance-only claim.
func TestHotplugVolume(t *testing.T) {
	e := newCtrlEnv(t, "e2e-hotplug")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	size := *resource.NewQuantity(pvcSize, resource.BinarySI)
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "hot", Namespace: e.ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc.Name = "hot2"
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dv := &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "hotdv"}, Spec: cdiv1beta1.DataVolumeSpec{
		Source: &cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}},
		Storage: &cdiv1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(dvSize)}}},
	}}
	if _, err := e.kv.CdiV1beta1().DataVolumes(e.ns).Create(ctx, dv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vm := e.demoVM(kubevirtv1.RunStrategyAlways)
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi, pod := f.running(demoVM, "")
	s := f.promptedConsole(demoVM)
	defer func() { s.close() }()
	bootID := func() string {
		t.Helper()
		s.send(`echo boot=$(cat /proc/sys/kernel/random/boot_id)`)
		m := s.expect(bootIDRE, time.Minute, false)
		if m == nil {
			t.Fatalf("no boot id from the guest:\n%s", s.all())
		}
		return m[1]
	}
	boot := bootID()

	// Into the instance only (virtctl's default without --persist).
	f.cli.run("addvolume", demoVM, "--volume-name=hot", "--serial=nvhot", "--bus=virtio")
	f.volumeReady(demoVM, "hot")
	dev := f.guestDisk(s, "nvhot")
	marker := fmt.Sprintf("nv-hotplug-%d", rand.IntN(1<<30))
	s.send(fmt.Sprintf("echo %s > /dev/%s && sync && echo written-$((1+1))", marker, dev))
	if s.expect(regexp.MustCompile(`(?m)^written-2`), time.Minute, false) == nil {
		t.Fatalf("writing to /dev/%s failed:\n%s", dev, s.all())
	}
	if v := e.vm(demoVM); hasVolumeNamed(v.Spec.Template.Spec.Volumes, "hot") {
		t.Error("addvolume without --persist changed the VM's template")
	}

	// Out again: the guest loses the disk, the attachment pod goes.
	f.cli.run("removevolume", demoVM, "--volume-name=hot")
	f.guestDiskGone(s, "nvhot")
	f.waitFor("the attachment pod of hot gone", hotplugTimeout, func() (bool, error) {
		_, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, "hp-volume-"+demoVM+"-hot", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})

	// Through the VM: the template keeps it, the controller brings it to the running instance,
	// and the claim still holds the marker.
	f.cli.run("addvolume", demoVM, "--volume-name=hot", "--serial=nvhot", "--bus=virtio", "--persist")
	f.volumeReady(demoVM, "hot")
	dev = f.guestDisk(s, "nvhot")
	f.guestReads(s, dev, marker)

	// The node agent killed and back: the disk stays, the status stays Ready. The console
	// session went through the old agent: a new one.
	f.killAgent(pod)
	s.close()
	s = f.promptedConsole(demoVM)
	f.volumeReady(demoVM, "hot")
	f.guestReads(s, dev, marker)

	f.cli.run("removevolume", demoVM, "--volume-name=hot", "--persist")
	f.guestDiskGone(s, "nvhot")

	// After the agent's restart: two more virtio disks at once (spare PCIe root ports), a claim
	// into the instance only and a DataVolume (its import waits for its first consumer, the
	// attachment pod) through the VM.
	f.cli.run("addvolume", demoVM, "--volume-name=hot2", "--serial=nvhot2", "--bus=virtio")
	f.cli.run("addvolume", demoVM, "--volume-name=hotdv", "--serial=nvhotdv", "--bus=virtio", "--persist")
	if v := e.vm(demoVM); !hasVolumeNamed(v.Spec.Template.Spec.Volumes, "hotdv") || hasVolumeNamed(v.Spec.Template.Spec.Volumes, "hot2") {
		t.Errorf("VM template volumes %v, want hotdv and not hot2", v.Spec.Template.Spec.Volumes)
	}
	f.volumeReady(demoVM, "hot2")
	f.volumeReady(demoVM, "hotdv")
	waitPhase(e, e.kv.CdiV1beta1().DataVolumes(e.ns), "hotdv", cdiv1beta1.Succeeded)
	for _, serial := range []string{"nvhot2", "nvhotdv"} {
		dev := f.guestDisk(s, serial)
		m := fmt.Sprintf("nv-%s-%d", serial, rand.IntN(1<<30))
		s.send(fmt.Sprintf("echo %s > /dev/%s && sync && echo written-$((2+1))", m, dev))
		if s.expect(regexp.MustCompile(`(?m)^written-3`), time.Minute, false) == nil {
			t.Fatalf("writing to /dev/%s failed:\n%s", dev, s.all())
		}
		f.guestReads(s, dev, m)
	}

	if got := bootID(); got != boot {
		t.Errorf("the guest restarted: boot id %s, was %s", got, boot)
	}
	if v, err := f.vmi(demoVM); err != nil || v.UID != vmi.UID {
		t.Errorf("the instance was replaced: %v", err)
	}

	// The VM's next start: the VM's hotplugged DataVolume is the launcher's, the instance-only
	// claim is gone with the old instance.
	s.close()
	f.cli.run("restart", demoVM)
	next, _ := f.running(demoVM, vmi.UID)
	if !hasVolumeNamed(next.Spec.Volumes, "hotdv") || hasVolumeNamed(next.Spec.Volumes, "hot2") {
		t.Errorf("after the restart the instance has volumes %v, want hotdv and not hot2", next.Spec.Volumes)
	}
	s = f.promptedConsole(demoVM)
	f.guestDisk(s, "nvhotdv")
}

// promptedConsole opens a console session that shows the guest's shell prompt, retrying a
// session refused at once (a node agent that just restarted answers 503 until it has re-attached
// to the domain).
func (f *flow) promptedConsole(name string) *consoleSession {
	f.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		s := f.cli.console(name)
		if s.expect(promptRE, bootTimeout, true) != nil {
			return s
		}
		s.close()
		if time.Now().After(deadline) || strings.Contains(s.all(), "Successfully connected") {
			f.dump()
			f.t.Fatalf("console of %s: no shell prompt:\n%s", name, s.all())
		}
		time.Sleep(2 * time.Second)
	}
}

func hasVolumeNamed(volumes []kubevirtv1.Volume, name string) bool {
	for _, v := range volumes {
		if v.Name == name {
			return true
		}
	}
	return false
}

// volumeReady waits until the instance reports the hotplugged volume Ready, with its attachment
// pod.
func (f *flow) volumeReady(name, volume string) {
	f.t.Helper()
	f.waitFor("volume "+volume+" Ready", hotplugTimeout, func() (bool, error) {
		v, err := f.vmi(name)
		if err != nil {
			return false, err
		}
		for _, s := range v.Status.VolumeStatus {
			if s.Name == volume {
				ok := s.Phase == kubevirtv1.VolumeReady && s.HotplugVolume != nil && s.HotplugVolume.AttachPodName != "" && s.Target != ""
				return ok, fmt.Errorf("phase %s reason %s: %s", s.Phase, s.Reason, s.Message)
			}
		}
		return false, fmt.Errorf("no status of volume %s", volume)
	})
	v, _ := f.vmi(name)
	for _, s := range v.Status.VolumeStatus {
		if s.Name == volume {
			f.t.Logf("volume %s: phase %s, target %s, attachment pod %s", volume, s.Phase, s.Target, s.HotplugVolume.AttachPodName)
		}
	}
}

// guestDisk waits until the guest has a virtio disk with the serial and returns its name.
func (f *flow) guestDisk(s *consoleSession, serial string) string {
	f.t.Helper()
	s.send(fmt.Sprintf(`i=0; while [ $i -lt 120 ]; do for d in /sys/block/vd*; do [ "$(cat $d/serial 2>/dev/null)" = %s ] && echo "hotdisk=${d##*/} sectors=$(cat $d/size)" && i=999; done; [ $i = 999 ] || { sleep 1; i=$((i+1)); }; done`, serial))
	m := s.expect(regexp.MustCompile(`hotdisk=(vd[a-z]+) sectors=(\d+)`), hotplugTimeout, false)
	if m == nil {
		f.dump()
		f.t.Fatalf("the guest has no disk with serial %s:\n%s", serial, s.all())
	}
	if m[2] == "0" {
		f.t.Errorf("guest disk %s has no sectors", m[1])
	}
	f.t.Logf("guest disk /dev/%s (%s sectors) with serial %s", m[1], m[2], serial)
	return m[1]
}

// guestDiskGone waits until the guest has no disk with the serial.
func (f *flow) guestDiskGone(s *consoleSession, serial string) {
	f.t.Helper()
	s.send(fmt.Sprintf(`i=0; while [ $i -lt 120 ]; do f=; for d in /sys/block/vd*; do [ "$(cat $d/serial 2>/dev/null)" = %s ] && f=1; done; [ -z "$f" ] && echo "nodisk-$((40+2))" && break; sleep 1; i=$((i+1)); done`, serial))
	if s.expect(regexp.MustCompile(`nodisk-42`), hotplugTimeout, false) == nil {
		f.dump()
		f.t.Fatalf("the guest still has the disk with serial %s:\n%s", serial, s.all())
	}
}

// guestReads checks that the guest reads marker at the start of the disk.
func (f *flow) guestReads(s *consoleSession, dev, marker string) {
	f.t.Helper()
	s.send(fmt.Sprintf("head -c %d /dev/%s | grep -c %s | sed s/^/found-/", len(marker)+1, dev, marker))
	m := s.expect(regexp.MustCompile(`found-(\d+)`), time.Minute, false)
	if m == nil || m[1] != "1" {
		f.t.Fatalf("the guest does not read %s from /dev/%s:\n%s", marker, dev, s.all())
	}
	if strings.Contains(s.all(), "I/O error") {
		f.t.Errorf("I/O errors on the console:\n%s", s.all())
	}
}
