package dhcp

import (
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var guestMAC = net.HardwareAddr{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}

func request(t MessageType, mutate func(*Packet)) *Packet {
	p := &Packet{Op: OpRequest, HType: 1, HLen: 6, XID: 7, CHAddr: guestMAC, Options: Options{OptMessageType: {byte(t)}}}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func responder(t *testing.T, mutate func(*Config)) *Responder {
	t.Helper()
	c := testConfig()
	c.ClientMAC = "52:54:00:12:34:56"
	if mutate != nil {
		mutate(&c)
	}
	r, err := NewResponder(c, Resolver{
		Servers: []net.IP{net.IPv4(10, 96, 0, 10).To4()},
		Search:  []string{"ns1.svc.cluster.local", "cluster.local"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ip(s string) net.IP { return net.ParseIP(s).To4() }

func TestReplyOfferAndAck(t *testing.T) {
	r := responder(t, func(c *Config) {
		c.BootFileName = "pxelinux.0"
		c.TFTPServerName = "tftp.example"
		c.NTPServers = []net.IP{ip("10.0.0.5"), ip("10.0.0.6")}
		c.PrivateOptions = []PrivateOption{{Code: 240, Value: "private"}}
	})
	wantOptions := func(t MessageType) Options {
		return Options{
			OptMessageType:    {byte(t)},
			OptServerID:       ip("10.0.2.1"),
			OptLeaseTime:      {0, 1, 0x51, 0x80}, // 86400
			OptRenewalTime:    {0, 0, 0xa8, 0xc0}, // 43200
			OptRebindingTime:  {0, 1, 0x27, 0x50}, // 75600
			OptSubnetMask:     {255, 255, 255, 0},
			OptRouter:         ip("10.0.2.1"),
			OptBroadcast:      ip("10.0.2.255"),
			OptDNS:            ip("10.96.0.10"),
			OptDomainName:     []byte("ns1.svc.cluster.local"),
			OptDomainSearch:   []byte("\x03ns1\x03svc\x07cluster\x05local\x00\x07cluster\x05local\x00"),
			OptHostname:       []byte("vm1"),
			OptMTU:            {0x05, 0xaa}, // 1450
			OptNTPServers:     {10, 0, 0, 5, 10, 0, 0, 6},
			OptTFTPServerName: []byte("tftp.example"),
			OptBootFileName:   []byte("pxelinux.0"),
			240:               []byte("private"),
		}
	}

	offer, why := r.Reply(request(Discover, func(p *Packet) { p.Flags = flagBroadcast }))
	if offer == nil {
		t.Fatalf("no offer: %s", why)
	}
	want := &Packet{Op: OpReply, HType: 1, HLen: 6, XID: 7, Flags: flagBroadcast, YIAddr: ip("10.0.2.2"), CHAddr: guestMAC,
		File: "pxelinux.0", Options: wantOptions(Offer)}
	if diff := cmp.Diff(want, offer.Packet); diff != "" {
		t.Errorf("offer (-want +got):\n%s", diff)
	}
	if !offer.Dest.Equal(net.IPv4bcast) {
		t.Errorf("offer to %v, want broadcast", offer.Dest)
	}

	ack, why := r.Reply(request(Request, func(p *Packet) {
		p.Options[OptRequestedIP] = ip("10.0.2.2")
		p.Options[OptServerID] = ip("10.0.2.1")
	}))
	if ack == nil {
		t.Fatalf("no ack: %s", why)
	}
	want.Options, want.Flags = wantOptions(Ack), 0
	if diff := cmp.Diff(want, ack.Packet); diff != "" {
		t.Errorf("ack (-want +got):\n%s", diff)
	}

	// A renewal: the client has its address and is answered there.
	renew, _ := r.Reply(request(Request, func(p *Packet) { p.CIAddr = ip("10.0.2.2") }))
	if renew == nil || renew.Packet.MessageType() != Ack || !renew.Dest.Equal(ip("10.0.2.2")) || !renew.Packet.CIAddr.Equal(ip("10.0.2.2")) {
		t.Errorf("renewal answered %+v, want an ACK to 10.0.2.2", renew)
	}
	if b, err := ack.Packet.Marshal(); err != nil || len(b) > 576-28 {
		t.Errorf("ack of %d bytes (%v): must fit a minimal 576-byte datagram", len(b), err)
	}
}

func TestReplyRefusals(t *testing.T) {
	r := responder(t, nil)
	nak, _ := r.Reply(request(Request, func(p *Packet) { p.Options[OptRequestedIP] = ip("10.0.2.77") }))
	if nak == nil || nak.Packet.MessageType() != Nak || !nak.Dest.Equal(net.IPv4bcast) || nak.Packet.YIAddr != nil {
		t.Errorf("request for another address: %+v, want a broadcast NAK", nak)
	}
	if !strings.Contains(string(nak.Packet.Options[OptMessage]), "10.0.2.2") {
		t.Errorf("NAK message %q does not name the guest's address", nak.Packet.Options[OptMessage])
	}
	if ans, _ := r.Reply(request(Request, nil)); ans == nil || ans.Packet.MessageType() != Nak {
		t.Errorf("request without an address: %+v, want a NAK", ans)
	}

	silent := map[string]*Packet{
		"another server chosen": request(Request, func(p *Packet) {
			p.Options[OptRequestedIP] = ip("10.0.2.2")
			p.Options[OptServerID] = ip("10.0.2.9")
		}),
		"another client":   request(Discover, func(p *Packet) { p.CHAddr = net.HardwareAddr{2, 0, 0, 0, 0, 9} }),
		"a server message": request(Discover, func(p *Packet) { p.Op = OpReply }),
		"not Ethernet":     request(Discover, func(p *Packet) { p.HType = 6 }),
		"release":          request(Release, nil),
		"decline":          request(Decline, nil),
		"no message type":  request(0, func(p *Packet) { delete(p.Options, OptMessageType) }),
	}
	for name, req := range silent {
		if ans, why := r.Reply(req); ans != nil || why == "" {
			t.Errorf("%s: answered %+v (%q), want silence with a reason", name, ans, why)
		}
	}
}

func TestReplyInform(t *testing.T) {
	r := responder(t, nil)
	ans, _ := r.Reply(request(Inform, func(p *Packet) { p.CIAddr = ip("10.0.2.2") }))
	if ans == nil || ans.Packet.MessageType() != Ack || !ans.Dest.Equal(ip("10.0.2.2")) {
		t.Fatalf("inform: %+v, want an ACK to the client", ans)
	}
	if ans.Packet.YIAddr != nil || ans.Packet.Options[OptLeaseTime] != nil {
		t.Errorf("inform answer gives a lease: yiaddr %v, lease %v", ans.Packet.YIAddr, ans.Packet.Options[OptLeaseTime])
	}
	if ans.Packet.Options[OptRouter] == nil || ans.Packet.Options[OptDNS] == nil {
		t.Errorf("inform answer lacks the configuration: %v", ans.Packet.Options)
	}
}

func TestReplyMinimalConfig(t *testing.T) {
	r, err := NewResponder(Config{Interface: "br", ServerIP: ip("192.168.7.9"), ClientIP: ip("192.168.7.10"), PrefixLength: 30,
		ClientMAC: guestMAC.String(), LeaseSeconds: 600}, Resolver{})
	if err != nil {
		t.Fatal(err)
	}
	ans, _ := r.Reply(request(Discover, nil))
	if ans == nil {
		t.Fatal("no offer")
	}
	o := ans.Packet.Options
	for _, code := range []byte{OptDNS, OptDomainName, OptDomainSearch, OptHostname, OptMTU, OptNTPServers, OptBootFileName, OptTFTPServerName} {
		if o[code] != nil {
			t.Errorf("option %d sent without a value configured: %v", code, o[code])
		}
	}
	if !net.IP(o[OptBroadcast]).Equal(ip("192.168.7.11")) || !net.IP(o[OptSubnetMask]).Equal(ip("255.255.255.252")) {
		t.Errorf("broadcast %v, mask %v; want 192.168.7.11, 255.255.255.252", net.IP(o[OptBroadcast]), net.IP(o[OptSubnetMask]))
	}
	if got := o[OptLeaseTime]; string(got) != string([]byte{0, 0, 2, 0x58}) {
		t.Errorf("lease % x, want 600 s", got)
	}
	if _, err := NewResponder(Config{}, Resolver{}); err == nil {
		t.Error("empty config: no error")
	}
}

// TestReplySecondaryNetwork: a secondary network's answer has the address and mask, but neither
// router nor name servers nor search domains (the pod network's interface has those).
func TestReplySecondaryNetwork(t *testing.T) {
	r := responder(t, func(c *Config) {
		c.NoRouter = true
		c.ServerIP, c.ClientIP = ip("169.254.75.10"), ip("192.0.2.11")
	})
	ans, why := r.Reply(request(Discover, nil))
	if ans == nil {
		t.Fatalf("no offer: %s", why)
	}
	o := ans.Packet.Options
	if !ans.Packet.YIAddr.Equal(ip("192.0.2.11")) || !net.IP(o[OptServerID]).Equal(ip("169.254.75.10")) {
		t.Errorf("offer of %v from %v", ans.Packet.YIAddr, net.IP(o[OptServerID]))
	}
	for _, code := range []byte{OptRouter, OptDNS, OptDomainName, OptDomainSearch} {
		if _, ok := o[code]; ok {
			t.Errorf("option %d in a secondary network's offer", code)
		}
	}
	if _, ok := o[OptSubnetMask]; !ok {
		t.Error("no subnet mask")
	}
}
