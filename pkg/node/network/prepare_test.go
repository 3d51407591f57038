package network

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// fakeRunner answers `ip address show` with links and records the rest.
type fakeRunner struct {
	links string
	calls []string
	fail  string // a command name that fails
}

func (f *fakeRunner) Run(_ context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	call := strings.Join(append([]string{name}, args...), " ")
	if stdin != nil {
		call += " <<" + string(stdin)
	}
	f.calls = append(f.calls, call)
	if name == f.fail {
		return nil, errors.New(name + " failed")
	}
	if name == "ip" && args[len(args)-1] == "show" {
		return []byte(f.links), nil
	}
	return nil, nil
}

func TestApplyCommands(t *testing.T) {
	p, err := PlanFor(podVMI(kubevirtv1.Interface{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	r := &fakeRunner{links: freshPod}
	mtu, err := Apply(context.Background(), r, p)
	if err != nil || mtu != 1450 {
		t.Fatalf("Apply: MTU %d, %v", mtu, err)
	}
	want := []string{
		"ip -json -details address show",
		"ip -batch - <<link add name k6t-eth0 type bridge\ntuntap add dev tap0 mode tap user 0 group 0\n" +
			"link set dev k6t-eth0 address 02:00:00:00:00:00 mtu 1450 up\nlink set dev tap0 master k6t-eth0 mtu 1450 up\n" +
			"address replace 10.0.2.1/24 dev k6t-eth0\n",
		"sysctl -q -w net.ipv4.ip_forward=1 net.ipv4.conf.k6t-eth0.route_localnet=1",
		"nft -f - <<" + ruleset(p),
	}
	if diff := cmp.Diff(want, r.calls); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, fail := range []string{"ip", "sysctl", "nft"} {
		r := &fakeRunner{links: freshPod, fail: fail}
		if _, err := Apply(context.Background(), r, p); err == nil || !strings.Contains(err.Error(), fail) {
			t.Errorf("%s failing: %v", fail, err)
		}
	}
	if _, err := Apply(context.Background(), &fakeRunner{links: `[{"ifname":"lo","mtu":65536}]`}, p); err == nil {
		t.Error("a pod without eth0: no error")
	}
}

func TestPrepareWithoutPodNetwork(t *testing.T) {
	// Nothing to do: the launcher is not even contacted.
	if ips, err := Prepare(context.Background(), &kubevirtv1.VirtualMachineInstance{}, Launcher{LibvirtSocket: "/nonexistent"}); err != nil || ips != nil {
		t.Errorf("Prepare: %v, %v", ips, err)
	}
	if _, err := Prepare(context.Background(), podVMI(kubevirtv1.Interface{}, nil), Launcher{LibvirtSocket: "/nonexistent"}); err == nil {
		t.Error("unreachable launcher: no error")
	}
}

func TestSocketPeerNetNS(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ns, err := SocketPeerNetNS(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	own, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	if ns.ID() != own {
		t.Errorf("the listener's namespace %s, want this process's %s", ns.ID(), own)
	}
	if _, err := SocketPeerNetNS(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("no socket: no error")
	}
	if _, err := OpenNetNS("/proc/self/ns/mnt"); err == nil || !strings.Contains(err.Error(), "not a network namespace") {
		t.Errorf("a mount namespace: %v", err)
	}
}

func TestApplyFindsThePodIPs(t *testing.T) {
	p, err := PlanFor(podVMI(kubevirtv1.Interface{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	// ip -json as it prints a dual-stack pod: link-local and loopback addresses are not the pod's.
	links := `[{"ifindex":1,"ifname":"lo","mtu":65536,"addr_info":[{"family":"inet","local":"127.0.0.1","prefixlen":8,"scope":"host"}]},
{"ifindex":2,"ifname":"eth0","mtu":1450,"linkinfo":{"info_kind":"veth"},"addr_info":[
 {"family":"inet6","local":"fd00::7","prefixlen":64,"scope":"global"},{"family":"inet6","local":"fe80::1","prefixlen":64,"scope":"link"},
 {"family":"inet","local":"10.88.0.7","prefixlen":16,"scope":"global"}]}]`
	res, err := apply(context.Background(), &fakeRunner{links: links}, p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"10.88.0.7", "fd00::7"}, res.podIPs); diff != "" {
		t.Errorf("pod IPs (-want +got):\n%s", diff)
	}
}
