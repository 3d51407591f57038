package dhcp

import (
	"context"
	"net"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
)

// TestServeRenewal runs the server on the loopback device and renews the
// guest's lease over real UDP: a renewal is answered by unicast, which
// loopback carries (broadcast answers are covered by the node e2e test,
// where a real guest takes its lease).
func TestServeRenewal(t *testing.T) {
	client, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	clientPort := client.LocalAddr().(*net.UDPAddr).Port

	r, err := NewResponder(Config{Interface: "lo", ServerIP: ip("10.0.2.1"), ClientIP: ip("127.0.0.1"), PrefixLength: 8,
		ClientMAC: guestMAC.String()}, Resolver{})
	if err != nil {
		t.Fatal(err)
	}
	probe, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := probe.LocalAddr().(*net.UDPAddr).Port
	probe.Close()
	s := &Server{Responder: r, Interface: "lo", Port: port, ReplyPort: clientPort, Log: ktesting.NewLogger(t, ktesting.DefaultConfig)}
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := s.Listen(ctx)
	if err != nil {
		cancel()
		t.Skipf("cannot bind to lo here: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, conn) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	// Noise first: the server must carry on.
	server := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	if _, err := client.WriteTo([]byte("not dhcp"), server); err != nil {
		t.Fatal(err)
	}
	req, _ := request(Request, func(p *Packet) { p.CIAddr = ip("127.0.0.1"); p.XID = 4242 }).Marshal()
	if _, err := client.WriteTo(req, server); err != nil {
		t.Fatal(err)
	}
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1500)
	n, _, err := client.ReadFrom(buf)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	ans, err := Parse(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	if ans.MessageType() != Ack || ans.XID != 4242 || !ans.YIAddr.Equal(ip("127.0.0.1")) {
		t.Errorf("answer %v xid %d yiaddr %v, want an ACK of 127.0.0.1 for xid 4242", ans.MessageType(), ans.XID, ans.YIAddr)
	}
}
