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
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/multus"
)

// multusSubnet is the address range of the tests' NetworkAttachmentDefinitions: none of the
// host's, the cluster's pod (10.88.0.0/16) or Service (10.96.0.0/12) ranges.
const multusSubnet = "172.30.77"

// createBridgeNAD creates the NetworkAttachmentDefinition name in the test's namespace: the CNI
// bridge plugin on a host bridge of the test's own (prefix nvnet-, which `make down` deletes;
// every node of the local cluster shares the host's network namespace, so the bridge joins pods
// of all nodes) with host-local IPAM whose state is under /run/nativevirt. The bridge and the
// IPAM state go away when the test ends.
func createBridgeNAD(e *ctrlEnv, name string) (bridge string) {
	e.t.Helper()
	bridge = "nvnet-" + randomSuffix(e.t)
	if len(bridge) > 15 {
		bridge = bridge[:15]
	}
	ipamDir := "/run/nativevirt/ipam-" + e.ns + "-" + name
	config := fmt.Sprintf(`{"cniVersion":"0.4.0","name":"%s","type":"bridge","bridge":"%s",`+
		`"ipam":{"type":"host-local","dataDir":"%s","ranges":[[{"subnet":"%s.0/24","rangeStart":"%s.10","rangeEnd":"%s.99"}]]}}`,
		name, bridge, ipamDir, multusSubnet, multusSubnet, multusSubnet)
	manifest := fmt.Sprintf("apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  config: '%s'\n",
		name, e.ns, config)
	if out, err := e.c.KubectlInput(manifest, "apply", "-f", "-"); err != nil {
		e.t.Fatalf("creating the NetworkAttachmentDefinition: %v\n%s", err, out)
	}
	e.t.Cleanup(func() {
		if out, err := exec.Command("ip", "link", "delete", bridge).CombinedOutput(); err != nil {
			e.t.Logf("cleanup: deleting bridge %s: %v %s", bridge, err, out)
		}
		_ = os.RemoveAll(ipamDir)
	})
	return bridge
}

// multusVMI is the demo guest with a second interface, bridge binding with MAC mac, on the
// Multus network networkName.
func multusVMI(e *ctrlEnv, name, networkName, mac string) *kubevirtv1.VirtualMachineInstance {
	spec := e.demoVM(kubevirtv1.RunStrategyManual).Spec.Template.Spec
	spec.Networks = append(spec.Networks, kubevirtv1.Network{Name: "blue",
		NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: networkName}}})
	spec.Domain.Devices.Interfaces = append(spec.Domain.Devices.Interfaces, kubevirtv1.Interface{Name: "blue", MacAddress: mac,
		InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}})
	return &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Spec: spec}
}

// multusStatus is the status of interface blue once it has an address from Multus.
func multusStatus(f *flow, name string) kubevirtv1.VirtualMachineInstanceNetworkInterface {
	f.t.Helper()
	var out kubevirtv1.VirtualMachineInstanceNetworkInterface
	f.waitFor("instance "+name+" reporting interface blue with its Multus address", controllerTimeout, func() (bool, error) {
		v, err := f.vmi(name)
		if err != nil {
			return false, err
		}
		for _, s := range v.Status.Interfaces {
			if s.Name == "blue" && strings.HasPrefix(s.IP, multusSubnet+".") && strings.Contains(s.InfoSource, "multus-status") {
				out = s
				return true, nil
			}
		}
		return false, fmt.Errorf("status.interfaces %+v", v.Status.Interfaces)
	})
	return out
}

// guestDHCP finds the guest's interface of MAC mac, asks for its address by DHCP (the demo
// guest configures only eth0 at boot) and returns the interface's name and IPv4 address with
// prefix.
func guestDHCP(f *flow, s *consoleSession, mac string) (iface, addr string) {
	f.t.Helper()
	s.send(`i=$(for d in /sys/class/net/*; do [ "$(cat $d/address)" = ` + mac + ` ] && basename $d; done); ` +
		`udhcpc -i "$i" -q -n -t 8 -T 2 >/dev/null 2>&1; echo "nic=$i addr=$(ip -4 -o addr show dev "$i" | awk '{print $4}')="`)
	m := s.expect(regexp.MustCompile(`nic=(eth\d+) addr=([0-9./]*)=`), 2*time.Minute, false)
	if m == nil {
		f.dump()
		f.t.Fatalf("no interface with MAC %s in the guest:\n%s", mac, s.all())
	}
	return m[1], m[2]
}

// TestMultusBridgeNetwork: two demo guests with a second interface on a bridge
// NetworkAttachmentDefinition (Multus, CNI bridge + host-local). Each guest keeps its
// configured MAC, gets the network's address by DHCP from its launcher, the instances report
// it (multus-status), and the guests ping each other over that interface.
func TestMultusBridgeNetwork(t *testing.T) {
	e := newCtrlEnv(t, "e2e-multus")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()
	createBridgeNAD(e, "blue-net")

	macs := map[string]string{"vmi-a": "02:00:00:c0:02:0a", "vmi-b": "02:00:00:c0:02:0b"}
	for _, name := range []string{"vmi-a", "vmi-b"} {
		if _, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, multusVMI(e, name, "blue-net", macs[name]), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	addrs := map[string]string{}
	for _, name := range []string{"vmi-a", "vmi-b"} {
		_, pod := f.running(name, "")
		if got := pod.Annotations[multus.NetworksAnnotation]; !strings.Contains(got, `"interface":"`+multus.PodInterfaceName("blue")+`"`) {
			t.Errorf("launcher pod %s: %s = %q", pod.Name, multus.NetworksAnnotation, got)
		}
		st := multusStatus(f, name)
		t.Logf("%s: status.interfaces[blue] = %+v", name, st)
		if st.MAC != macs[name] {
			t.Errorf("%s: status MAC %s, want the configured %s", name, st.MAC, macs[name])
		}
		addrs[name] = st.IP
	}

	sessions := map[string]*consoleSession{}
	for _, name := range []string{"vmi-a", "vmi-b"} {
		s := f.cli.console(name)
		defer s.close()
		sessions[name] = s
		if s.expect(promptRE, bootTimeout, true) == nil {
			f.dump()
			t.Fatalf("%s: no shell prompt on the console:\n%s", name, s.all())
		}
		nic, addr := guestDHCP(f, s, macs[name])
		t.Logf("%s: guest interface %s with MAC %s has %s by DHCP", name, nic, macs[name], addr)
		if addr != addrs[name]+"/24" {
			f.serialLogTail(name)
			t.Fatalf("%s: guest address %q by DHCP, want the network's %s/24", name, addr, addrs[name])
		}
	}

	a := sessions["vmi-a"]
	a.send("ping -c 3 -W 3 " + addrs["vmi-b"] + ` >/dev/null 2>&1 && r=ok || r=failed; echo "ping=${r}="`)
	m := a.expect(regexp.MustCompile(`ping=(ok|failed)=`), time.Minute, false)
	if m == nil || m[1] != "ok" {
		f.dump()
		t.Fatalf("vmi-a cannot ping vmi-b at %s over the Multus network:\n%s", addrs["vmi-b"], a.all())
	}
	t.Logf("vmi-a pinged vmi-b at %s over the Multus network", addrs["vmi-b"])
}

// TestMultusMissingNetworkAttachment: an instance whose Multus network has no
// NetworkAttachmentDefinition stays Pending without a pod, saying which one is missing; once it
// exists, the pod is created.
func TestMultusMissingNetworkAttachment(t *testing.T) {
	e := newCtrlEnv(t, "e2e-multus-missing")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()
	vmi := multusVMI(e, "vmi-nonet", "late-net", "")
	created, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, vmi, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "failed to locate network attachment definition " + e.ns + "/late-net"
	f.waitFor("instance vmi-nonet Synchronized=False FailedCreate", controllerTimeout, func() (bool, error) {
		v, err := f.vmi(vmi.Name)
		if err != nil {
			return false, err
		}
		for _, c := range v.Status.Conditions {
			if c.Type == kubevirtv1.VirtualMachineInstanceSynchronized && c.Status == corev1.ConditionFalse &&
				c.Reason == "FailedCreate" && c.Message == want {
				if v.Status.Phase != kubevirtv1.Pending {
					return false, fmt.Errorf("phase %s, want Pending", v.Status.Phase)
				}
				return true, nil
			}
		}
		return false, fmt.Errorf("phase %s, conditions %+v", v.Status.Phase, v.Status.Conditions)
	})
	if pods, err := f.launcherPods(created.UID); err != nil || len(pods) != 0 {
		t.Fatalf("launcher pods without the network: %d (%v)", len(pods), err)
	}
	out, _ := e.c.Kubectl("get", "events", "-n", e.ns, "--field-selector", "involvedObject.name=vmi-nonet,reason=FailedCreate", "-o", "jsonpath={.items[*].message}")
	if !strings.Contains(out, want) {
		t.Errorf("no FailedCreate event saying %q: %q", want, out)
	}
	f.show("instance waiting for its network")

	createBridgeNAD(e, "late-net")
	f.waitFor("a launcher pod once the NetworkAttachmentDefinition exists", controllerTimeout, func() (bool, error) {
		pods, err := f.launcherPods(created.UID)
		return err == nil && len(pods) == 1, err
	})
}

// TestMultusLiveMigration: a VM with a bridge interface on a Multus network is live migratable,
// migrates to the other node, keeps its MAC and still answers on the network's address: the
// demo guest's web server (port 8080), reached from the node through an address on the test's
// host bridge. It needs two nodes.
func TestMultusLiveMigration(t *testing.T) {
	requireNodes(t, 2)
	e := newCtrlEnv(t, "e2e-multus-mig")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()
	bridge := createBridgeNAD(e, "blue-net")
	const mac = "02:00:00:c0:02:0c"
	vm := e.demoVM(kubevirtv1.RunStrategyAlways)
	vm.Spec.Template.Spec = multusVMI(e, demoVM, "blue-net", mac).Spec
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi, source := f.running(demoVM, "")
	f.waitFor("LiveMigratable=True", controllerTimeout, func() (bool, error) {
		s, err := f.condition(demoVM, kubevirtv1.VirtualMachineInstanceIsMigratable)
		return s == corev1.ConditionTrue, err
	})
	if out, err := exec.Command("ip", "address", "add", multusSubnet+".1/24", "dev", bridge).CombinedOutput(); err != nil {
		t.Fatalf("giving the node an address on %s: %v %s", bridge, err, out)
	}
	s := f.cli.console(demoVM)
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		t.Fatalf("no shell prompt on the console:\n%s", s.all())
	}
	_, addr := guestDHCP(f, s, mac)
	s.close()
	ip, _, _ := strings.Cut(addr, "/")
	if body, err := waitHTTP(ip+":8080", time.Minute); err != nil || !strings.Contains(body, "hello from") {
		f.dump()
		t.Fatalf("the guest does not answer on the Multus network before the migration: %q, %v", body, err)
	}
	t.Logf("the guest answers at %s on %s before the migration", ip, source.Spec.NodeName)

	f.cli.run("migrate", demoVM)
	m := f.migrationOf(demoVM, nil)
	m = f.migrationPhase(m.Name, migrationTimeout, kubevirtv1.MigrationSucceeded)
	f.logMigration(m)
	after, err := f.vmi(demoVM)
	if err != nil {
		t.Fatal(err)
	}
	if after.UID != vmi.UID || after.Status.NodeName == source.Spec.NodeName {
		t.Fatalf("after the migration: instance %s on %s, want %s on another node than %s", after.UID, after.Status.NodeName, vmi.UID, source.Spec.NodeName)
	}
	for _, st := range after.Status.Interfaces {
		if st.Name == "blue" && st.MAC != mac {
			t.Errorf("MAC %s after the migration, want %s", st.MAC, mac)
		}
	}
	if body, err := waitHTTP(ip+":8080", time.Minute); err != nil || !strings.Contains(body, "hello from") {
		f.dump()
		t.Fatalf("the guest does not answer on the Multus network after the migration to %s: %q, %v", after.Status.NodeName, body, err)
	}
	t.Logf("the guest answers at %s on %s after the migration", ip, after.Status.NodeName)
}
