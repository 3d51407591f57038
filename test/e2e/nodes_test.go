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
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// hostnameLabel is the node label the kubelet sets to its node name here (--hostname-override).
const hostnameLabel = "kubernetes.io/hostname"

// TestTwoNodes checks that the cluster's nodes are separate kubelets with a node agent each, and
// that VMs run on both: each node is Ready and marked schedulable, with a stream endpoint on its
// own address that the node agent pod of THAT node listens on; two instances pinned to the two
// nodes by nodeSelector run there in real launcher pods, and the console of each reaches its own
// guest through kube-apiserver. It needs a cluster of two nodes or more (NV_NODES=2).
func TestTwoNodes(t *testing.T) {
	requireNodes(t, 2)
	e := newCtrlEnv(t, "e2e-nodes")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	// Every node: Ready, schedulable, and an endpoint on its own address served by its agent.
	var nodes []corev1.Node
	e.wait("every node Ready, labelled kubevirt.io/schedulable=true, with a handler endpoint", func() (bool, error) {
		list, err := e.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, n := range list.Items {
			if !nodeReady(&n) || n.Labels["kubevirt.io/schedulable"] != "true" || n.Annotations[streams.HandlerEndpointAnnotation] == "" {
				return false, fmt.Errorf("node %s: ready %t, labels %v, annotations %v", n.Name, nodeReady(&n), n.Labels, n.Annotations)
			}
		}
		nodes = list.Items
		return true, nil
	})
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	endpoints := map[string]string{}
	for _, n := range nodes {
		endpoint := n.Annotations[streams.HandlerEndpointAnnotation]
		ip := nodeInternalIP(&n)
		t.Logf("node %s: InternalIP %s, %s=%s", n.Name, ip, streams.HandlerEndpointAnnotation, endpoint)
		host, port, err := net.SplitHostPort(endpoint)
		if err != nil || host != ip {
			t.Errorf("node %s: handler endpoint %q, want its InternalIP %s and a port (%v)", n.Name, endpoint, ip, err)
			continue
		}
		if other, dup := endpoints[endpoint]; dup {
			t.Errorf("nodes %s and %s publish the same handler endpoint %s", other, n.Name, endpoint)
		}
		endpoints[endpoint] = n.Name
		f.checkEndpointServedByNodeAgent(&n, host, port)
	}
	if t.Failed() {
		t.FailNow()
	}

	// One instance per node, pinned by nodeSelector, both running at once.
	pinned := nodes[:2]
	for _, n := range pinned {
		spec := e.demoVM(kubevirtv1.RunStrategyManual).Spec.Template.Spec
		spec.NodeSelector = map[string]string{hostnameLabel: n.Labels[hostnameLabel]}
		vmi := &kubevirtv1.VirtualMachineInstance{
			ObjectMeta: metav1.ObjectMeta{Name: "vmi-on-" + n.Name, Namespace: e.ns},
			Spec:       spec,
		}
		if _, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cgroupRoots := map[string]string{}
	podNets := map[string]string{}
	for _, n := range pinned {
		name := "vmi-on-" + n.Name
		vmi, pod := f.running(name, "")
		if vmi.Status.NodeName != n.Name || pod.Spec.NodeName != n.Name {
			f.dump()
			t.Fatalf("instance %s: status.nodeName %q, launcher pod %s on %q; want both %s", name, vmi.Status.NodeName, pod.Name, pod.Spec.NodeName, n.Name)
		}
		qemu := podProcesses(pod.UID, "qemu-system")
		if len(qemu) != 1 {
			f.dump()
			t.Fatalf("instance %s: QEMU processes in the cgroup of pod %s: %v, want one", name, pod.Name, qemu)
		}
		root := cgroupRoot(qemu[0])
		t.Logf("instance %s on %s: launcher pod %s (IP %s), QEMU PID %d under cgroup root %q", name, n.Name, pod.Name, pod.Status.PodIP, qemu[0], root)
		if other, dup := cgroupRoots[root]; dup {
			t.Errorf("pods of nodes %s and %s share the cgroup root %q: their kubelets would remove each other's pods", other, n.Name, root)
		}
		cgroupRoots[root] = n.Name
		if ip := net.ParseIP(pod.Status.PodIP).To4(); ip != nil {
			subnet := fmt.Sprintf("%d.%d.%d.0/24", ip[0], ip[1], ip[2])
			if other, dup := podNets[subnet]; dup {
				t.Errorf("pods of nodes %s and %s both in %s: each node has a pod range of its own", other, n.Name, subnet)
			}
			podNets[subnet] = n.Name
		} else {
			t.Errorf("launcher pod %s: pod IP %q", pod.Name, pod.Status.PodIP)
		}
	}

	// Each node probed QEMU for itself (its own image snapshot), and its launcher's libvirt
	// kept those capabilities instead of probing again in its first define.
	for _, n := range pinned {
		f.checkQEMUCapabilitiesFromNode(n.Name, "vmi-on-"+n.Name)
	}

	// The console of each instance, through kube-apiserver → nativevirt-apiserver → the node
	// agent of its node, reaches its own guest: the guest's SMBIOS UUID is its instance's.
	for _, n := range pinned {
		name := "vmi-on-" + n.Name
		vmi, err := e.vmi(name)
		if err != nil {
			t.Fatal(err)
		}
		uuid := f.consoleCheck(name)
		if vmi.Spec.Domain.Firmware == nil || !strings.EqualFold(string(vmi.Spec.Domain.Firmware.UUID), uuid) {
			t.Errorf("console of %s on %s: guest product_uuid %q, want the instance's firmware UUID %+v", name, n.Name, uuid, vmi.Spec.Domain.Firmware)
		}
	}
}

// nodeAgentPod is the node agent pod of node; a test error when there is not exactly one.
func (f *flow) nodeAgentPod(node string) (corev1.Pod, bool) {
	f.t.Helper()
	pods, err := f.kube.CoreV1().Pods("nativevirt").List(context.Background(), metav1.ListOptions{
		LabelSelector: handlerSelector, FieldSelector: "spec.nodeName=" + node,
	})
	if err != nil || len(pods.Items) != 1 {
		f.t.Errorf("node agent pods on %s: %d (%v), want 1", node, len(pods.Items), err)
		return corev1.Pod{}, false
	}
	return pods.Items[0], true
}

// checkQEMUCapabilitiesFromNode checks, in the log of node's agent, that the domain of instance
// name started with the QEMU capabilities the node's probe wrote (pkg/node/qemucaps).
func (f *flow) checkQEMUCapabilitiesFromNode(node, name string) {
	f.t.Helper()
	agent, ok := f.nodeAgentPod(node)
	if !ok {
		return
	}
	out, err := f.c.Kubectl("logs", "-n", "nativevirt", agent.Name, "-c", "handler")
	if err != nil {
		f.t.Errorf("logs of %s: %v", agent.Name, err)
		return
	}
	want := fmt.Sprintf(`"Domain started" vmi="%s/%s"`, f.ns, name)
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, want) {
			if !strings.Contains(line, `qemuCapabilities="node cache"`) {
				f.t.Errorf("node %s started %s without its node's QEMU capabilities: %s", node, name, line)
			} else {
				f.t.Logf("node %s: %s", node, line[strings.Index(line, want):])
			}
			return
		}
	}
	f.t.Errorf("no %s line in the log of node %s's agent", want, node)
}

// checkEndpointServedByNodeAgent checks that the process listening on host:port is the node
// agent of the node's own DaemonSet pod (not another node's agent).
func (f *flow) checkEndpointServedByNodeAgent(n *corev1.Node, host, port string) {
	f.t.Helper()
	agent, ok := f.nodeAgentPod(n.Name)
	if !ok {
		return
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		f.t.Errorf("node %s: endpoint port %q", n.Name, port)
		return
	}
	listeners, err := tcpListenerPIDs(net.ParseIP(host), p)
	if err != nil {
		f.t.Errorf("listeners on %s:%s: %v", host, port, err)
		return
	}
	agentPIDs := podProcesses(agent.UID, "nativevirt-hand")
	f.t.Logf("node %s: %s:%s served by PIDs %v; node agent pod %s has PIDs %v", n.Name, host, port, listeners, agent.Name, agentPIDs)
	if len(listeners) == 0 || len(agentPIDs) != 1 {
		f.t.Errorf("node %s: listeners %v on %s:%s, agent processes %v; want the agent listening", n.Name, listeners, host, port, agentPIDs)
		return
	}
	for _, pid := range listeners {
		if pid != agentPIDs[0] {
			f.t.Errorf("node %s: %s:%s is served by PID %d, not by its node agent (PID %d of pod %s)", n.Name, host, port, pid, agentPIDs[0], agent.Name)
		}
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func nodeInternalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// tcpListenerPIDs lists the host processes holding a listening IPv4 TCP socket bound to ip:port
// exactly (the test runs in the host's network namespace, as do the node agents).
func tcpListenerPIDs(ip net.IP, port int) ([]int, error) {
	ip4 := ip.To4()
	if ip4 == nil {
		return nil, fmt.Errorf("%s is not an IPv4 address", ip)
	}
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return nil, err
	}
	// local_address is the address's bytes in host (little-endian) order, then the port, in hex.
	want := fmt.Sprintf("%02X%02X%02X%02X:%04X", ip4[3], ip4[2], ip4[1], ip4[0], port)
	inodes := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == want && f[3] == "0A" { // 0A: LISTEN
			inodes["socket:["+f[9]+"]"] = true
		}
	}
	if len(inodes) == 0 {
		return nil, nil
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); err == nil && inodes[l] {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids, nil
}

// cgroupRoot is the part of pid's memory cgroup path (v1, or the unified one) above "/kubepods":
// the kubelet's cgroupRoot that the process's pod lives under.
func cgroupRoot(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || (parts[1] != "memory" && parts[1] != "") {
			continue
		}
		if i := strings.Index(parts[2], "/kubepods"); i >= 0 {
			return "/" + strings.Trim(parts[2][:i], "/")
		}
	}
	return ""
}
