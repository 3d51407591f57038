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
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
)

// TestEFIBoot starts the demo guest with UEFI firmware (bootloader efi, secureBoot false, as
// KubeVirt's examples write it): libvirt picks OVMF from the launcher image's firmware
// descriptors, OVMF boots the demo disk's EFI/BOOT/BOOTX64.EFI, and the guest's kernel sees EFI.
// With secure boot, OVMF refuses that unsigned loader. The guest has an emulated TPM 2.0.
func TestEFIBoot(t *testing.T) {
	e := newCtrlEnv(t, "e2e-efi")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	spec := e.demoVM(kubevirtv1.RunStrategyManual).Spec.Template.Spec
	spec.Domain.Firmware = &kubevirtv1.Firmware{Bootloader: &kubevirtv1.Bootloader{
		EFI: &kubevirtv1.EFI{SecureBoot: ptr.To(false)}}}
	// syslinux's UEFI loader cannot place the kernel in the 128 MiB of the demo VM once OVMF
	// took its share ("Failed to allocate memory for kernel image").
	guest := resource.MustParse("256Mi")
	spec.Domain.Memory = &kubevirtv1.Memory{Guest: &guest}
	// And a TPM, as a Windows 11 guest wants with its UEFI: swtpm, started by libvirt.
	spec.Domain.Devices.TPM = &kubevirtv1.TPMDevice{}
	// And a sound card (the guest's kernel has no driver for it in the demo initramfs: QEMU
	// taking it is what is tested).
	spec.Domain.Devices.Sound = &kubevirtv1.SoundDevice{Name: "audio"}
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vmi-efi", Namespace: e.ns}, Spec: spec}
	// Secure boot, KubeVirt's default for efi (with the SMM it needs): the firmware with
	// Microsoft's keys enrolled, which refuses the demo disk's unsigned loader.
	secure := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vmi-secureboot", Namespace: e.ns}, Spec: *spec.DeepCopy()}
	secure.Spec.Domain.Firmware.Bootloader.EFI = &kubevirtv1.EFI{}
	secure.Spec.Domain.Features = &kubevirtv1.Features{SMM: &kubevirtv1.FeatureState{}}
	for _, v := range []*kubevirtv1.VirtualMachineInstance{vmi, secure} {
		if _, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, v, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	running, pod := f.running(vmi.Name, "")

	s := f.cli.console(vmi.Name)
	defer s.close()
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.serialLogTail(vmi.Name)
		f.dump()
		t.Fatalf("no shell prompt on the console:\n%s", s.all())
	}
	s.send("echo efi-$(test -d /sys/firmware/efi && echo yes || echo no)-tpm-$(cat /sys/class/tpm/tpm0/tpm_version_major 2>/dev/null)-end")
	if s.expect(regexp.MustCompile(`efi-yes-tpm-2-end`), time.Minute, false) == nil {
		t.Fatalf("the guest's kernel does not see EFI (/sys/firmware/efi) or a TPM 2.0 (/sys/class/tpm/tpm0):\n%s", s.all())
	}
	// OVMF's boot manager wrote on the serial port before the kernel did.
	out, err := e.c.Kubectl("exec", "-n", e.ns, pod.Name, "-c", "compute", "--", "cat", convert.SerialLogPath(launcherpod.PrivateDir))
	if err != nil || !strings.Contains(out, "BdsDxe: starting Boot") {
		t.Errorf("the serial log does not show OVMF starting the disk (%v):\n%s", err, lastLines(out, 20))
	}
	t.Log("OVMF booted the demo disk's EFI loader; the guest's kernel sees EFI and a TPM 2.0")
	xml, err := e.c.Kubectl("exec", "-n", e.ns, pod.Name, "-c", "compute", "--", "virsh", "-c",
		"qemu+unix:///system?socket="+launcherpod.LibvirtSocket, "dumpxml", e.ns+"_"+vmi.Name)
	if err != nil || !strings.Contains(xml, `<sound model='ich9'>`) || !strings.Contains(xml, `<tpm model='tpm-tis'>`) {
		t.Errorf("the running domain has no ich9 sound card or no TIS TPM (%v):\n%s", err, xml)
	}

	secureRunning, securePod := f.running(secure.Name, "")
	f.waitFor("secure boot refusing the unsigned loader (serial log)", bootTimeout, func() (bool, error) {
		out, err := e.c.Kubectl("exec", "-n", e.ns, securePod.Name, "-c", "compute", "--", "cat", convert.SerialLogPath(launcherpod.PrivateDir))
		if err != nil {
			return false, err
		}
		return strings.Contains(out, "Access Denied"), fmt.Errorf("serial log: %s", lastLines(out, 5))
	})
	t.Log("secure boot: OVMF refused the demo disk's unsigned EFI loader (Access Denied)")

	for _, v := range []*kubevirtv1.VirtualMachineInstance{running, secureRunning} {
		if _, err := e.c.Kubectl("delete", "vmi", v.Name, "-n", e.ns, "--wait=false"); err != nil {
			t.Fatal(err)
		}
	}
	f.goneWithPods(vmi.Name, running.UID)
	f.goneWithPods(secure.Name, secureRunning.UID)
}
