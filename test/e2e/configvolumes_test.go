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
	"encoding/binary"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// TestConfigVolumes gives the demo guest a config map, a secret, the downward API, a service
// account and a sysprep answer file as KubeVirt does: each an ISO disk with the volume's files, labelled with its
// volumeLabel (cfgdata by default). The kubelet mounts them into the launcher pod with the pod's
// rights and the launcher builds the disks; the guest mounts them by label and reads them. An
// SSH key access credential (noCloud) reaches the cloud-init meta-data, and a secret volume
// without a disk gives the guest SLIC and MSDM ACPI tables (firmware.acpi.slicNameRef,
// msdmNameRef).
func TestConfigVolumes(t *testing.T) {
	e := newCtrlEnv(t, "e2e-cfgvol")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"color": "blue"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "unattend"}, Data: map[string]string{"autounattend.xml": "<unattend>sysprep-7</unattend>"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kube.CoreV1().Secrets(e.ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db"}, Data: map[string][]byte{"password": []byte("s3cr3t-42")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// SLIC and MSDM ACPI tables (Windows OEM activation), from a secret volume without a disk.
	if _, err := e.kube.CoreV1().Secrets(e.ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "slic"}, Data: map[string][]byte{
			"slic.bin": acpiTable("SLIC", "nativevirt-slic-marker"),
			"msdm.bin": acpiTable("MSDM", "nativevirt-msdm-marker"),
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const sshKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE2eTestKeyOnlyForTheE2eTest e2e@nativevirt"
	if _, err := e.kube.CoreV1().Secrets(e.ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ssh-keys"}, Data: map[string][]byte{"tester": []byte(sshKey + "\n")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The namespace's default service account comes from kube-controller-manager.
	f.waitFor("the default service account", controllerTimeout, func() (bool, error) {
		_, err := e.kube.CoreV1().ServiceAccounts(e.ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})

	spec := e.demoVM(kubevirtv1.RunStrategyManual).Spec.Template.Spec
	for _, v := range []kubevirtv1.Volume{
		{Name: "app-config", VolumeSource: kubevirtv1.VolumeSource{ConfigMap: &kubevirtv1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, VolumeLabel: "CMDATA"}}},
		{Name: "db-secret", VolumeSource: kubevirtv1.VolumeSource{Secret: &kubevirtv1.SecretVolumeSource{
			SecretName: "db", VolumeLabel: "SECDATA"}}},
		{Name: "pod-info", VolumeSource: kubevirtv1.VolumeSource{DownwardAPI: &kubevirtv1.DownwardAPIVolumeSource{
			VolumeLabel: "DWDATA", Fields: []corev1.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
		{Name: "sa", VolumeSource: kubevirtv1.VolumeSource{ServiceAccount: &kubevirtv1.ServiceAccountVolumeSource{
			ServiceAccountName: "default"}}},
		// Windows setup's answer file, on the disk labelled unattendCD.
		{Name: "sysprep", VolumeSource: kubevirtv1.VolumeSource{Sysprep: &kubevirtv1.SysprepSource{
			ConfigMap: &corev1.LocalObjectReference{Name: "unattend"}}}},
	} {
		spec.Volumes = append(spec.Volumes, v)
		spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, kubevirtv1.Disk{Name: v.Name,
			DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}})
	}
	spec.Volumes = append(spec.Volumes, kubevirtv1.Volume{Name: "acpi", VolumeSource: kubevirtv1.VolumeSource{
		Secret: &kubevirtv1.SecretVolumeSource{SecretName: "slic"}}})
	spec.Domain.Firmware = &kubevirtv1.Firmware{ACPI: &kubevirtv1.ACPI{SlicNameRef: "acpi", MsdmNameRef: "acpi"}}
	spec.AccessCredentials = []kubevirtv1.AccessCredential{{SSHPublicKey: &kubevirtv1.SSHPublicKeyAccessCredential{
		Source: kubevirtv1.SSHPublicKeyAccessCredentialSource{Secret: &kubevirtv1.AccessCredentialSecretSource{SecretName: "ssh-keys"}},
		PropagationMethod: kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{
			NoCloud: &kubevirtv1.NoCloudSSHPublicKeyAccessCredentialPropagation{}},
	}}}
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vmi-cfg", Namespace: e.ns,
		Labels: map[string]string{"team": "config-volumes"}}, Spec: spec}
	if _, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// An instance whose access credential's secret does not exist does not start, and says why.
	broken := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vmi-nokeys", Namespace: e.ns},
		Spec: *e.demoVM(kubevirtv1.RunStrategyManual).Spec.Template.Spec.DeepCopy()}
	broken.Spec.AccessCredentials = []kubevirtv1.AccessCredential{*spec.AccessCredentials[0].DeepCopy()}
	broken.Spec.AccessCredentials[0].SSHPublicKey.Source.Secret.SecretName = "no-such-keys"
	if _, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, broken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running, pod := f.running(vmi.Name, "")
	if pod.Spec.ServiceAccountName != "default" {
		t.Errorf("the launcher pod runs as service account %q, want default", pod.Spec.ServiceAccountName)
	}

	s := f.cli.console(vmi.Name)
	defer s.close()
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		t.Fatalf("no shell prompt on the console:\n%s", s.all())
	}
	s.send("for l in CMDATA SECDATA DWDATA cfgdata unattendCD; do mkdir -p /mnt/$l; mount -r -t iso9660 $(findfs LABEL=$l) /mnt/$l; done; " +
		"echo cfg-$(cat /mnt/CMDATA/color)-$(cat /mnt/SECDATA/password)-$(grep -c 'team=\"config-volumes\"' /mnt/DWDATA/labels)-" +
		"$(cat /mnt/cfgdata/namespace)-$(head -c 3 /mnt/cfgdata/token)-$(grep -c 'BEGIN CERTIFICATE' /mnt/cfgdata/ca.crt)-" +
		"$(grep -o 'sysprep-7' /mnt/unattendCD/autounattend.xml)-end")
	want := "cfg-blue-s3cr3t-42-1-" + e.ns + "-eyJ-1-sysprep-7-end"
	if s.expect(regexp.MustCompile(regexp.QuoteMeta(want)), time.Minute, false) == nil {
		f.dump()
		t.Fatalf("the guest did not read %q from its config disks:\n%s", want, s.all())
	}
	t.Logf("the guest read its config map, secret, downward API, service account and sysprep disks: %s", want)
	if strings.Contains(s.all(), "can't find") {
		t.Errorf("a disk label was not found:\n%s", s.all())
	}
	// The SLIC and MSDM tables are among the guest's ACPI tables.
	s.send("echo acpi-$(grep -c nativevirt-slic-marker /sys/firmware/acpi/tables/SLIC)-$(grep -c nativevirt-msdm-marker /sys/firmware/acpi/tables/MSDM)-end")
	if s.expect(regexp.MustCompile(`acpi-1-1-end`), time.Minute, false) == nil {
		t.Errorf("the guest lacks the SLIC or the MSDM table from the secret:\n%s", s.all())
	} else {
		t.Log("the guest's ACPI tables hold the SLIC and MSDM tables of the secret")
	}
	// The access credential's key is in the NoCloud meta-data (cloud-init's public-keys), which
	// the demo guest's init mounted at /mnt/cloudinit.
	s.send("echo keys-$(grep -c '\"tester\": \"" + sshKey + "\"' /mnt/cloudinit/meta-data)-end")
	if s.expect(regexp.MustCompile(`keys-1-end`), time.Minute, false) == nil {
		out, _ := e.c.Kubectl("get", "vmi", vmi.Name, "-n", e.ns, "-o", "jsonpath={.spec.accessCredentials}")
		t.Fatalf("the NoCloud meta-data does not hold the SSH key of the access credential (%s):\n%s", out, s.all())
	}
	t.Log("the NoCloud meta-data holds the access credential's SSH key under public-keys")

	// kubectl describe vmi: the node agent's events, KubeVirt's.
	f.waitFor("the node agent's events on vmi-cfg and vmi-nokeys", controllerTimeout, func() (bool, error) {
		out, err := e.c.Kubectl("get", "events", "-n", e.ns, "--field-selector", "source=nativevirt-handler",
			"-o", "jsonpath={range .items[*]}{.involvedObject.name} {.type} {.reason}: {.message}{\"\\n\"}{end}")
		if err != nil {
			return false, err
		}
		started := regexp.MustCompile(`(?m)^vmi-cfg Normal Started: VirtualMachineInstance started\.$`).MatchString(out)
		failed := regexp.MustCompile(`(?m)^vmi-nokeys Warning SyncFailed: .*secret no-such-keys.*not found`).MatchString(out)
		if started && failed {
			t.Logf("events of nativevirt-handler:\n%s", out)
			return true, nil
		}
		return false, fmt.Errorf("started %t, sync failure %t in:\n%s", started, failed, out)
	})
	if v, err := f.vmi(broken.Name); err != nil || v.Status.Phase == kubevirtv1.Running {
		t.Errorf("vmi-nokeys: %v, phase %s; want it not running", err, phaseOf(v))
	}

	for _, name := range []string{vmi.Name, broken.Name} {
		if _, err := e.c.Kubectl("delete", "vmi", name, "-n", e.ns, "--wait=false"); err != nil {
			t.Fatal(err)
		}
	}
	f.goneWithPods(vmi.Name, running.UID)
	brokenVMI, err := f.vmi(broken.Name)
	if err == nil {
		f.goneWithPods(broken.Name, brokenVMI.UID)
	}
}

// acpiTable is an ACPI table with signature sig (SLIC, MSDM): the 36-byte header (signature,
// length, revision, checksum, OEM and creator fields) and body, its bytes summing to 0.
func acpiTable(sig, body string) []byte {
	t := make([]byte, 36, 36+len(body))
	copy(t[0:4], sig)
	binary.LittleEndian.PutUint32(t[4:8], uint32(36+len(body)))
	t[8] = 1
	copy(t[10:16], "NVTEST")
	copy(t[16:24], "NVSLIC01")
	binary.LittleEndian.PutUint32(t[24:28], 1)
	copy(t[28:32], "NVRT")
	binary.LittleEndian.PutUint32(t[32:36], 1)
	t = append(t, body...)
	var sum byte
	for _, b := range t {
		sum += b
	}
	t[9] = -sum
	return t
}
