package network

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"

	"github.com/nativevirt/nativevirt/pkg/node/network/netnstest"
)

// This file tests Apply in real network namespaces of its own (root only):
//
//	node ns: nv-up 10.250.0.1/24 ──veth── pod ns: eth0 10.250.0.2/24 (MTU 1400)
//	                                       k6t-eth0 10.0.2.1/24 ── tap0 (made by Apply)
//	                                                            └─ gv0 ──veth── guest ns: g0 10.0.2.2/24
//
// The veth gv0 stands in for the guest behind tap0 (a tap needs a QEMU to
// carry frames), so that the NAT rules are tested with real connections.

func needTools(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces)")
	}
	for _, tool := range []string{"ip", "nft", "nsenter", "sysctl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s missing (hack/deps/node.list): %v", tool, err)
		}
	}
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newNetNS adds a named network namespace, deleted at the end of the test
// (with the veth ends inside it).
func newNetNS(t *testing.T, role string) string {
	t.Helper()
	name := fmt.Sprintf("nvtest-%s-%06d", role, rand.IntN(1000000))
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", name).Run() })
	return name
}

// peerServer listens on addr in namespace ns and answers every connection
// with the address it came from.
func peerServer(t *testing.T, ns, addr string) {
	t.Helper()
	var ln net.Listener
	if err := netnstest.Run(ns, func() (err error) { ln, err = net.Listen("tcp4", addr); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "peer=%s\n", c.RemoteAddr().(*net.TCPAddr).IP)
			c.Close()
		}
	}()
}

// askPeer connects to addr from namespace ns and returns the peer address
// the server saw.
func askPeer(t *testing.T, ns, addr string) (string, error) {
	t.Helper()
	var c net.Conn
	if err := netnstest.Run(ns, func() (err error) { c, err = net.DialTimeout("tcp4", addr, 3*time.Second); return err }); err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimPrefix(strings.TrimSpace(line), "peer="), err
}

// snapshot is the state Apply owns, without what changes on its own
// (bridge timers, rule counters).
func snapshot(t *testing.T, ns *NetNS) (map[string]link, string, string) {
	t.Helper()
	ctx := context.Background()
	out, err := ns.Run(ctx, nil, "ip", "-json", "-details", "address", "show")
	if err != nil {
		t.Fatal(err)
	}
	links, err := parseLinks(out)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := ns.Run(ctx, nil, "nft", "list", "tables")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := ns.Run(ctx, nil, "nft", "list", "table", "ip", Table)
	if err != nil {
		t.Fatal(err)
	}
	counters := regexp.MustCompile(`counter packets \d+ bytes \d+`)
	return links, string(tables), counters.ReplaceAllString(string(rules), "counter")
}

func TestApplyInNetworkNamespaces(t *testing.T) {
	needTools(t)
	node, pod, guest := newNetNS(t, "node"), newNetNS(t, "pod"), newNetNS(t, "guest")
	for _, cmd := range [][]string{
		{"ip", "-n", node, "link", "add", "nv-up", "mtu", "1400", "type", "veth", "peer", "name", "eth0", "netns", pod},
		{"ip", "-n", node, "address", "add", "10.250.0.1/24", "dev", "nv-up"},
		{"ip", "-n", node, "link", "set", "nv-up", "up"},
		{"ip", "-n", pod, "address", "add", "10.250.0.2/24", "dev", "eth0"},
		{"ip", "-n", pod, "link", "set", "eth0", "mtu", "1400", "up"},
		{"ip", "-n", pod, "link", "set", "lo", "up"},
		{"ip", "-n", pod, "route", "add", "default", "via", "10.250.0.1"},
		{"ip", "-n", guest, "link", "add", "g0", "type", "veth", "peer", "name", "gv0", "netns", pod},
		{"ip", "-n", guest, "address", "add", "10.0.2.2/24", "dev", "g0"},
		{"ip", "-n", guest, "link", "set", "g0", "up"},
		{"ip", "-n", guest, "link", "set", "lo", "up"},
		{"ip", "-n", guest, "route", "add", "default", "via", "10.0.2.1"},
	} {
		run(t, cmd...)
	}
	ns, err := OpenNetNS("/run/netns/" + pod)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	ctx := context.Background()

	p, err := PlanFor(podVMI(kubevirtv1.Interface{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	mtu, err := Apply(ctx, ns, p)
	if err != nil {
		t.Fatal(err)
	}
	if mtu != 1400 {
		t.Errorf("MTU %d, want eth0's 1400", mtu)
	}
	links, tables, rules := snapshot(t, ns)
	br, tap := links["k6t-eth0"], links["tap0"]
	if br.kind() != "bridge" || br.MTU != 1400 || br.Address != BridgeMAC || len(br.Addrs) == 0 ||
		br.Addrs[0].Local != "10.0.2.1" || br.Addrs[0].PrefixLen != 24 || !contains(br.Flags, "UP") {
		t.Errorf("bridge %+v, want k6t-eth0 up with %s, MTU 1400 and 10.0.2.1/24", br, BridgeMAC)
	}
	if tap.kind() != "tun" || tap.LinkInfo.Tun.Type != "tap" || tap.LinkInfo.Tun.MultiQueue || tap.Master != "k6t-eth0" || tap.MTU != 1400 {
		t.Errorf("tap %+v, want a single-queue tap0 on k6t-eth0 with MTU 1400", tap)
	}
	owner := run(t, "ip", "-n", pod, "-details", "link", "show", "tap0")
	if !strings.Contains(owner, "persist on user root group root") {
		t.Errorf("tap0 is not persistent and owned by root:\n%s", owner)
	}
	for key, want := range map[string]string{"net.ipv4.ip_forward": "1", "net.ipv4.conf.k6t-eth0.route_localnet": "1"} {
		if got, err := ns.Run(ctx, nil, "sysctl", "-n", key); err != nil || strings.TrimSpace(string(got)) != want {
			t.Errorf("%s = %q (%v), want %s", key, got, err, want)
		}
	}

	// Again, as a restarted node agent would: the same links, one table, the same rules.
	if _, err := Apply(ctx, ns, p); err != nil {
		t.Fatal(err)
	}
	links2, tables2, rules2 := snapshot(t, ns)
	if diff := cmp.Diff(links, links2); diff != "" {
		t.Errorf("links changed on the second Apply (-first +second):\n%s", diff)
	}
	if tables2 != tables || strings.Count(tables2, "table ip "+Table) != 1 {
		t.Errorf("tables after the second Apply:\n%s\nwant once more:\n%s", tables2, tables)
	}
	if rules2 != rules {
		t.Errorf("rules changed on the second Apply:\n%s\nwant:\n%s", rules2, rules)
	}
	t.Logf("nft list table ip %s:\n%s", Table, rules2)

	// The stand-in guest joins the bridge; connections through the NAT.
	run(t, "ip", "-n", pod, "link", "set", "gv0", "master", "k6t-eth0", "up")
	peerServer(t, guest, "10.0.2.2:8080")
	peerServer(t, guest, "10.0.2.2:8081")
	peerServer(t, node, "10.250.0.1:9090")
	check := func(what, from, addr, want string) {
		t.Helper()
		got, err := askPeer(t, from, addr)
		if err != nil || got != want {
			t.Errorf("%s: peer %q (%v), want %s", what, got, err, want)
		}
	}
	check("inbound to the pod IP reaches the guest from the client's address", node, "10.250.0.2:8080", "10.250.0.1")
	check("any port when none are declared", node, "10.250.0.2:8081", "10.250.0.1")
	check("the pod's loopback reaches the guest from the gateway", pod, "127.0.0.1:8080", "10.0.2.1")
	check("the guest's outbound traffic leaves from the pod IP", guest, "10.250.0.1:9090", "10.250.0.2")
	// NetNS.Dial, as the node agent forwards a port: a socket made in the pod's namespace.
	c, err := ns.Dial(ctx, "tcp4", "127.0.0.1:8080")
	if err != nil {
		t.Fatalf("Dial in the pod's namespace: %v", err)
	}
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if strings.TrimSpace(line) != "peer=10.0.2.1" {
		t.Errorf("Dial to the pod's 127.0.0.1:8080: %q (%v), want the guest's answer peer=10.0.2.1", line, err)
	}

	// Declared ports: only those reach the guest.
	declared, err := PlanFor(podVMI(kubevirtv1.Interface{Ports: []kubevirtv1.Port{{Port: 8080}}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(ctx, ns, declared); err != nil {
		t.Fatal(err)
	}
	check("a declared port", node, "10.250.0.2:8080", "10.250.0.1")
	check("a declared port from the pod's loopback", pod, "127.0.0.1:8080", "10.0.2.1")
	if got, err := askPeer(t, node, "10.250.0.2:8081"); err == nil {
		t.Errorf("undeclared port 8081 reached the guest (peer %s)", got)
	}
	check("the guest's outbound traffic with declared ports", guest, "10.250.0.1:9090", "10.250.0.2")

	// More queues: the tap is made again as a multi-queue tap.
	declared.NIC.Queues = 2
	if _, err := Apply(ctx, ns, declared); err != nil {
		t.Fatal(err)
	}
	links3, _, _ := snapshot(t, ns)
	if tap := links3["tap0"]; tap.kind() != "tun" || !tap.LinkInfo.Tun.MultiQueue || tap.Master != "k6t-eth0" {
		t.Errorf("tap after the queue change %+v, want a multi-queue tap0 on the bridge", tap)
	}
}
