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
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// guestAgentUserData formats the disk with serial DATA1 as ext2 and mounts it at /data: a file
// system the guest agent reports and can freeze (the initramfs's own cannot be frozen).
const guestAgentUserData = "#!/bin/sh\nfor b in /sys/block/vd*; do [ \"$(cat $b/serial 2>/dev/null)\" = DATA1 ] && dev=/dev/${b##*/}; done\n" +
	"mke2fs -q $dev && mkdir -p /data && mount -t ext2 $dev /data && echo data-mounted\n"

// TestGuestAgent: the demo guest runs QEMU's guest agent, so what KubeVirt asks of it works end
// to end: the AgentConnected condition and the guest OS in the status, the guestosinfo, userlist
// and filesystemlist subresources, SSH keys and a password written by the agent (access
// credentials), an exec readiness probe and a guestAgentPing liveness probe, and freeze/unfreeze
// of the guest's file systems (with KubeVirt's automatic thaw after the unfreeze timeout).
func TestGuestAgent(t *testing.T) {
	e := newCtrlEnv(t, "e2e-guestagent")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()
	const (
		name     = "vmi-agent"
		sshKey   = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGuestAgentKeyOnlyForTheE2eTest ga@nativevirt"
		password = "pw-from-a-secret-7"
	)
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "root-keys"}, Data: map[string][]byte{"laptop": []byte(sshKey + "\n")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "root-password"}, Data: map[string][]byte{"root": []byte(password)}},
	} {
		if _, err := e.kube.CoreV1().Secrets(e.ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	spec := e.demoVM(kubevirtv1.RunStrategyManual).Spec.Template.Spec
	setUserData(&spec, guestAgentUserData)
	spec.Volumes = append(spec.Volumes, kubevirtv1.Volume{Name: "data", VolumeSource: kubevirtv1.VolumeSource{
		EmptyDisk: &kubevirtv1.EmptyDiskSource{Capacity: resource.MustParse("32Mi")}}})
	spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, kubevirtv1.Disk{Name: "data", Serial: "DATA1",
		DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}})
	spec.AccessCredentials = []kubevirtv1.AccessCredential{{SSHPublicKey: &kubevirtv1.SSHPublicKeyAccessCredential{
		Source: kubevirtv1.SSHPublicKeyAccessCredentialSource{Secret: &kubevirtv1.AccessCredentialSecretSource{SecretName: "root-keys"}},
		PropagationMethod: kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{
			QemuGuestAgent: &kubevirtv1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"root"}}},
	}}, {UserPassword: &kubevirtv1.UserPasswordAccessCredential{
		Source: kubevirtv1.UserPasswordAccessCredentialSource{Secret: &kubevirtv1.AccessCredentialSecretSource{SecretName: "root-password"}},
		PropagationMethod: kubevirtv1.UserPasswordAccessCredentialPropagationMethod{
			QemuGuestAgent: &kubevirtv1.QemuGuestAgentUserPasswordAccessCredentialPropagation{}},
	}}}
	// Ready once the test creates /run/ready in the guest (guest-exec of test -f); alive while
	// the guest agent answers its ping (lenient: the guest boots under emulation first).
	spec.ReadinessProbe = &kubevirtv1.Probe{PeriodSeconds: 2, TimeoutSeconds: 5, Handler: kubevirtv1.Handler{
		Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/run/ready"}}}}
	spec.LivenessProbe = &kubevirtv1.Probe{InitialDelaySeconds: 60, PeriodSeconds: 5, TimeoutSeconds: 5, FailureThreshold: 6,
		Handler: kubevirtv1.Handler{GuestAgentPing: &kubevirtv1.GuestAgentPing{}}}
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Spec: spec}
	if _, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running, pod := f.running(name, "")

	// The agent's connection reaches the status when libvirt sees it, not at the next resync.
	f.waitFor("AgentConnected=True and the guest OS in the status", controllerTimeout, func() (bool, error) {
		v, err := f.vmi(name)
		if err != nil {
			return false, err
		}
		st, _ := f.condition(name, kubevirtv1.VirtualMachineInstanceAgentConnected)
		return st == corev1.ConditionTrue && v.Status.GuestOSInfo.ID == "nativevirt-demo",
			fmt.Errorf("AgentConnected %q, guest OS %+v", st, v.Status.GuestOSInfo)
	})

	// What the node agent reports of the running domain, as KubeVirt's status does.
	if v, err := f.vmi(name); err != nil {
		t.Fatal(err)
	} else {
		targets := map[string]string{}
		for _, vs := range v.Status.VolumeStatus {
			targets[vs.Name] = vs.Target
		}
		st := v.Status
		if st.Machine == nil || !strings.HasPrefix(st.Machine.Type, "pc-q35-") || st.CurrentCPUTopology == nil ||
			st.CurrentCPUTopology.Sockets*st.CurrentCPUTopology.Cores*st.CurrentCPUTopology.Threads != 1 ||
			st.Memory == nil || st.Memory.GuestCurrent == nil || st.Memory.GuestCurrent.Value() != 128<<20 ||
			targets["containerdisk"] != "vda" || targets["data"] == "" || st.MigrationMethod != kubevirtv1.BlockMigration ||
			len(st.Interfaces) != 1 || st.Interfaces[0].InterfaceName != "eth0" || st.Interfaces[0].InfoSource != "domain, guest-agent" {
			t.Errorf("status: machine %+v, topology %+v, memory %+v, volume targets %v, migration method %q, interfaces %+v; "+
				"want pc-q35-*, 1 vCPU, 128Mi, containerdisk on vda, BlockMigration, eth0 named by the guest agent",
				st.Machine, st.CurrentCPUTopology, st.Memory, targets, st.MigrationMethod, st.Interfaces)
		} else {
			t.Logf("status: machine %s, volume targets %v, migration method %s, interface %+v", st.Machine.Type, targets, st.MigrationMethod, st.Interfaces[0])
		}
	}

	// The guest agent's reports through kube-apiserver, nativevirt-apiserver and the node agent.
	info := &kubevirtv1.VirtualMachineInstanceGuestAgentInfo{}
	f.getSubresource(name, "guestosinfo", info)
	t.Logf("guestosinfo: OS %q, kernel %s, agent %s, %d commands, freeze %q, file systems %+v", info.OS.Name,
		info.OS.KernelRelease, info.GAVersion, len(info.SupportedCommands), info.FSFreezeStatus, info.FSInfo.Filesystems)
	if info.OS.Name != "NativeVirt demo guest" || info.OS.KernelRelease == "" || info.Hostname == "" {
		t.Errorf("guestosinfo: OS %+v, host name %q; want the demo guest's", info.OS, info.Hostname)
	}
	if !strings.HasPrefix(info.GAVersion, "7.") || len(info.SupportedCommands) < 10 || info.FSFreezeStatus != "thawed" {
		t.Errorf("guestosinfo: agent %q with %d commands, freeze status %q; want Debian's qemu-ga 7.x, thawed",
			info.GAVersion, len(info.SupportedCommands), info.FSFreezeStatus)
	}
	users := &kubevirtv1.VirtualMachineInstanceGuestOSUserList{}
	f.getSubresource(name, "userlist", users)
	t.Logf("userlist: %d users (the demo guest's console shell is no login session)", len(users.Items))
	fsList := &kubevirtv1.VirtualMachineInstanceFileSystemList{}
	f.getSubresource(name, "filesystemlist", fsList)
	var data *kubevirtv1.VirtualMachineInstanceFileSystem
	for i := range fsList.Items {
		if fsList.Items[i].MountPoint == "/data" {
			data = &fsList.Items[i]
		}
	}
	if data == nil || data.FileSystemType != "ext2" || data.TotalBytes < 20<<20 {
		t.Errorf("filesystemlist %+v: want /data, ext2 on the 32Mi empty disk", fsList.Items)
	} else {
		t.Logf("filesystemlist: %s %s on %s, %d of %d bytes used", data.MountPoint, data.FileSystemType, data.DiskName, data.UsedBytes, data.TotalBytes)
	}

	// Access credentials: the agent wrote the key and the password.
	f.waitFor("AccessCredentialsSynchronized=True", controllerTimeout, func() (bool, error) {
		st, err := f.condition(name, kubevirtv1.VirtualMachineInstanceAccessCredentialsSynchronized)
		return st == corev1.ConditionTrue, err
	})
	s := f.cli.console(name)
	defer s.close()
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		t.Fatalf("no shell prompt on the console:\n%s", s.all())
	}
	// The password is checked against the shadow entry's own salt: only the right one matches.
	s.send("h=$(awk -F: '$1==\"root\"{print $2}' /etc/shadow); salt=$(echo \"$h\" | cut -d'$' -f3); " +
		"echo creds-$(grep -c '" + sshKey + "' /root/.ssh/authorized_keys)-$([ \"$(mkpasswd -m sha512 -S \"$salt\" '" + password + "')\" = \"$h\" ] && echo pw-ok)-end")
	if s.expect(regexp.MustCompile(`creds-1-pw-ok-end`), time.Minute, false) == nil {
		t.Fatalf("the guest agent did not write the SSH key and the password:\n%s", s.all())
	}
	t.Log("the guest has the secret's SSH key in /root/.ssh/authorized_keys and root's password from the other secret")

	// The exec readiness probe runs in the guest: not Ready until /run/ready exists.
	if c, err := f.readyCondition(name); err != nil || c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("Ready %+v (%v) before /run/ready exists, want False", c, err)
	}
	s.send("touch /run/ready; echo ready-$((40+2))")
	if s.expect(regexp.MustCompile(`ready-42`), time.Minute, false) == nil {
		t.Fatalf("the guest did not create /run/ready:\n%s", s.all())
	}
	f.waitFor("Ready=True once the exec probe passes", controllerTimeout, func() (bool, error) {
		st, err := f.condition(name, kubevirtv1.VirtualMachineInstanceReady)
		return st == corev1.ConditionTrue, err
	})

	// Freeze and unfreeze: fsFreezeStatus follows the guest agent.
	f.putSubresource(name, "freeze", `{"unfreezeTimeout":"5m"}`)
	f.waitFreezeStatus(name, "frozen")
	f.putSubresource(name, "unfreeze", "")
	f.waitFreezeStatus(name, "")
	// A freeze nobody ends is ended by the node agent after the unfreeze timeout.
	frozenAt := time.Now()
	f.putSubresource(name, "freeze", `{"unfreezeTimeout":"5s"}`)
	f.waitFreezeStatus(name, "frozen")
	f.waitFreezeStatus(name, "")
	t.Logf("thawed by itself %s after a freeze with unfreezeTimeout 5s", time.Since(frozenAt).Round(time.Second))
	s.send("echo after-thaw >/data/probe && sync && cat /data/probe")
	if s.expect(regexp.MustCompile(`(?m)^after-thaw`), time.Minute, false) == nil {
		t.Errorf("the guest cannot write to /data after the thaw:\n%s", s.all())
	}

	// The node agent's metrics of the VMI, KubeVirt's kubevirt_vmi_*, for a token allowed to
	// get /metrics only.
	allowed, denied := f.metricsTokens()
	for _, tc := range []struct {
		who, token string
		want       int
	}{{"no token", "", http.StatusUnauthorized}, {"a token without the right", denied, http.StatusForbidden}} {
		if code, body := f.scrapeNode(running.Status.NodeName, tc.token); code != tc.want {
			t.Errorf("metrics with %s: %d %s, want %d", tc.who, code, body, tc.want)
		}
	}
	code, body := f.scrapeNode(running.Status.NodeName, allowed)
	if code != http.StatusOK {
		t.Fatalf("metrics: %d %s", code, body)
	}
	ids := fmt.Sprintf(`name=%q,namespace=%q,node=%q`, name, e.ns, running.Status.NodeName)
	for _, m := range []struct {
		metric, labels string
		min            float64
	}{
		{"kubevirt_vmi_cpu_usage_seconds_total", ids, 1},
		{"kubevirt_vmi_vcpu_seconds_total", `id="0",` + ids + `,state="running"`, 1},
		{"kubevirt_vmi_memory_domain_bytes", ids, 128 << 20},
		{"kubevirt_vmi_memory_resident_bytes", ids, 16 << 20},
		{"kubevirt_vmi_network_receive_bytes_total", `interface="default",` + ids, 0},
		{"kubevirt_vmi_storage_read_traffic_bytes_total", `drive="containerdisk",` + ids, 1 << 20},
		{"kubevirt_vmi_storage_write_traffic_bytes_total", `drive="data",` + ids, 1},
	} {
		v, err := metricValue(body, m.metric, m.labels)
		if err != nil || v < m.min {
			t.Errorf("%s{%s} = %v (%v), want at least %v", m.metric, m.labels, v, err, m.min)
		} else {
			t.Logf("%s{%s} %v", m.metric, m.labels, v)
		}
	}

	// The controllers count the instance among the running ones of its node, with its guest OS.
	phase := fmt.Sprintf(`flavor="<none>",guest_os_kernel_release=%q,guest_os_machine="x86_64",guest_os_name="NativeVirt demo guest",guest_os_version_id="1",instance_type="<none>",node=%q,os="<none>",phase="running",preference="<none>",workload="<none>"`,
		info.OS.KernelRelease, running.Status.NodeName)
	// (At least 1: an instance of an earlier test may still be shutting down on the node.)
	if v, err := metricValue(f.scrapeControllers(allowed), "kubevirt_vmi_phase_count", phase); err != nil || v < 1 {
		t.Errorf("kubevirt_vmi_phase_count{%s} = %v (%v), want at least 1", phase, v, err)
	}

	// The guestAgentPing liveness probe passed all along: the same pod, no Unhealthy event.
	if v, err := f.vmi(name); err != nil || v.Status.Phase != kubevirtv1.Running || v.UID != running.UID {
		t.Errorf("%s: %v, phase %s; want the same instance still Running", name, err, phaseOf(v))
	}
	events, err := e.kube.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=Unhealthy,involvedObject.name=" + pod.Name})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events.Items {
		if strings.HasPrefix(ev.Message, "Liveness") {
			t.Errorf("the guest agent ping failed: %s", ev.Message)
		}
	}

	if _, err := e.c.Kubectl("delete", "vmi", name, "-n", e.ns, "--wait=false"); err != nil {
		t.Fatal(err)
	}
	f.goneWithPods(name, running.UID)
}

// getSubresource GETs a VMI subresource at virtctl's path and decodes the answer into out.
func (f *flow) getSubresource(name, sub string, out any) {
	f.t.Helper()
	raw, err := f.kv.KubevirtV1().RESTClient().Get().
		AbsPath("/apis/subresources.kubevirt.io/v1/namespaces", f.ns, "virtualmachineinstances", name, sub).
		DoRaw(context.Background())
	if err != nil {
		f.t.Fatalf("GET %s of %s: %v", sub, name, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		f.t.Fatalf("GET %s of %s: %v in %s", sub, name, err, raw)
	}
}

// putSubresource PUTs a VMI subresource at virtctl's path.
func (f *flow) putSubresource(name, sub, body string) {
	f.t.Helper()
	req := f.kv.KubevirtV1().RESTClient().Put().
		AbsPath("/apis/subresources.kubevirt.io/v1/namespaces", f.ns, "virtualmachineinstances", name, sub)
	if body != "" {
		req = req.Body([]byte(body)).SetHeader("Content-Type", "application/json")
	}
	if err := req.Do(context.Background()).Error(); err != nil {
		f.t.Fatalf("PUT %s %s of %s: %v", sub, body, name, err)
	}
	f.t.Logf("PUT %s %s of %s: ok", sub, body, name)
}

// waitFreezeStatus waits until the instance's status.fsFreezeStatus is want.
func (f *flow) waitFreezeStatus(name, want string) {
	f.t.Helper()
	f.waitFor(fmt.Sprintf("fsFreezeStatus %q", want), controllerTimeout, func() (bool, error) {
		v, err := f.vmi(name)
		if err != nil {
			return false, err
		}
		return v.Status.FSFreezeStatus == want, fmt.Errorf("fsFreezeStatus %q", v.Status.FSFreezeStatus)
	})
}
