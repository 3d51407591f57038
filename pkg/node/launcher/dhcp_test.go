package launcher

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nativevirt/nativevirt/pkg/node/dhcp"
)

// freeUDPPort is a port nothing listens on right now.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// TestServeDHCP starts the launcher's DHCP loop before the node agent has
// written the configuration (as in a pod), then writes it and renews a lease
// over the loopback device: the answer carries the pod's resolver.
func TestServeDHCP(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("binding to a device needs root outside a launcher pod's namespace")
	}
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 10.96.0.10\nsearch ns1.svc.cluster.local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	client, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	port := freeUDPPort(t)
	opts := Options{RunDir: dir, ResolvConf: resolv, DHCPPort: port, DHCPReplyPort: client.LocalAddr().(*net.UDPAddr).Port}
	opts.Complete()
	fakeClock := testingclock.NewFakeClock(time.Now())
	l := &Launcher{opts: opts, log: ktesting.NewLogger(t, ktesting.DefaultConfig), clock: fakeClock}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.serveDHCP(ctx)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the DHCP loop did not stop")
		}
	}()

	// The loop looked for the file, found none, and waits to look again.
	awaitWaiter(t, fakeClock)
	mac := "52:54:00:12:34:56"
	if err := dhcp.WriteConfig(dir, &dhcp.Config{Interface: "lo", ServerIP: net.IPv4(10, 0, 2, 1), ClientIP: net.IPv4(127, 0, 0, 1),
		PrefixLength: 8, ClientMAC: mac, MTU: 1400}); err != nil {
		t.Fatal(err)
	}
	fakeClock.Step(dhcpRetry)
	hw, _ := net.ParseMAC(mac)
	req, err := (&dhcp.Packet{Op: dhcp.OpRequest, HType: 1, HLen: 6, XID: 99, CIAddr: net.IPv4(127, 0, 0, 1), CHAddr: hw,
		Options: dhcp.Options{dhcp.OptMessageType: {byte(dhcp.Request)}}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1500)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := client.WriteTo(req, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}); err != nil {
			t.Fatal(err)
		}
		_ = client.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, _, err := client.ReadFrom(buf)
		if err == nil {
			ans, err := dhcp.Parse(buf[:n])
			if err != nil {
				t.Fatal(err)
			}
			if ans.MessageType() != dhcp.Ack || !net.IP(ans.Options[dhcp.OptDNS]).Equal(net.IPv4(10, 96, 0, 10)) ||
				string(ans.Options[dhcp.OptDomainName]) != "ns1.svc.cluster.local" {
				t.Errorf("answer %v with DNS %v, domain %q; want an ACK with the pod's resolver", ans.MessageType(),
					net.IP(ans.Options[dhcp.OptDNS]), ans.Options[dhcp.OptDomainName])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no DHCP answer: %v", err)
		}
	}
}

// awaitWaiter waits until something waits on c (the DHCP loop's retry), for at most 10 s.
func awaitWaiter(t *testing.T, c *testingclock.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !c.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("the DHCP loop never waited to retry")
		}
		time.Sleep(time.Millisecond)
	}
}
