package dhcp

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// discoverBytes is a DHCPDISCOVER laid out by hand, field by field, as a
// client such as busybox udhcpc sends it.
func discoverBytes() []byte {
	b := make([]byte, 236)
	b[0], b[1], b[2] = 1, 1, 6                   // op, htype, hlen
	copy(b[4:8], []byte{0xde, 0xad, 0xbe, 0xef}) // xid
	copy(b[10:12], []byte{0x80, 0x00})           // flags: broadcast
	copy(b[28:34], []byte{0x52, 0x54, 0x00, 0x12, 0x34, 0x56})
	b = append(b, 99, 130, 83, 99)
	b = append(b, 53, 1, 1) // DISCOVER
	b = append(b, 0, 0)     // pads
	b = append(b, 61, 7, 1, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56)
	b = append(b, 12, 4, 'd', 'e', 'm', 'o') // hostname
	b = append(b, 55, 4, 1, 3, 6, 26)        // parameter request list
	b = append(b, 255)
	return b
}

func TestParseDiscover(t *testing.T) {
	p, err := Parse(discoverBytes())
	if err != nil {
		t.Fatal(err)
	}
	want := &Packet{
		Op: OpRequest, HType: 1, HLen: 6, XID: 0xdeadbeef, Flags: flagBroadcast,
		CHAddr: net.HardwareAddr{0x52, 0x54, 0x00, 0x12, 0x34, 0x56},
		Options: Options{
			OptMessageType:   {1},
			OptClientID:      {1, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56},
			OptHostname:      []byte("demo"),
			OptParameterList: {1, 3, 6, 26},
		},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if p.MessageType() != Discover {
		t.Errorf("message type %v, want DISCOVER", p.MessageType())
	}
}

func TestParseErrors(t *testing.T) {
	good := discoverBytes()
	noCookie := append([]byte(nil), good...)
	noCookie[236] = 0
	badHLen := append([]byte(nil), good...)
	badHLen[2] = 17
	truncated := append(append([]byte(nil), good[:240]...), 12, 10, 'x')
	dangling := append(append([]byte(nil), good[:240]...), 12)
	for name, b := range map[string][]byte{
		"short": good[:200], "no cookie": noCookie, "hlen 17": badHLen, "option past the end": truncated, "option without length": dangling,
	} {
		if _, err := Parse(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Options end at the end of the data without an end option.
	if p, err := Parse(good[:len(good)-1]); err != nil || p.MessageType() != Discover {
		t.Errorf("without the end option: %v, %v", p, err)
	}
}

func TestMarshalLayout(t *testing.T) {
	p := &Packet{
		Op: OpReply, HType: 1, HLen: 6, XID: 0x01020304, Flags: flagBroadcast,
		YIAddr: net.IPv4(10, 0, 2, 2), CHAddr: net.HardwareAddr{2, 0, 0, 0, 0, 1}, File: "pxelinux.0",
		Options: Options{OptRouter: net.IPv4(10, 0, 2, 1).To4(), OptMessageType: {byte(Offer)}, OptSubnetMask: {255, 255, 255, 0}},
	}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != minReplyLen {
		t.Errorf("reply of %d bytes, want padded to %d", len(b), minReplyLen)
	}
	checks := []struct {
		what string
		at   int
		want []byte
	}{
		{"op htype hlen hops", 0, []byte{2, 1, 6, 0}},
		{"xid", 4, []byte{1, 2, 3, 4}},
		{"flags", 10, []byte{0x80, 0}},
		{"ciaddr", 12, []byte{0, 0, 0, 0}},
		{"yiaddr", 16, []byte{10, 0, 2, 2}},
		{"chaddr", 28, []byte{2, 0, 0, 0, 0, 1, 0}},
		{"file", 108, []byte("pxelinux.0\x00")},
		{"cookie", 236, []byte{99, 130, 83, 99}},
		// Message type first, then by code: 1, 3, end.
		{"options", 240, []byte{53, 1, 2, 1, 4, 255, 255, 255, 0, 3, 4, 10, 0, 2, 1, 255}},
	}
	for _, c := range checks {
		if got := b[c.at : c.at+len(c.want)]; !bytes.Equal(got, c.want) {
			t.Errorf("%s at %d: % x, want % x", c.what, c.at, got, c.want)
		}
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back, cmp.Comparer(func(a, b net.IP) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestMarshalSplitsLongOptions(t *testing.T) {
	long := []byte(strings.Repeat("a", 300))
	p := &Packet{Op: OpReply, HType: 1, HLen: 6, Options: Options{OptMessageType: {byte(Ack)}, OptDomainSearch: long}}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	opts := b[240:]
	want := append([]byte{53, 1, 5, 119, 255}, long[:255]...)
	want = append(append(want, 119, 45), long[255:]...)
	want = append(want, 255)
	if !bytes.Equal(opts[:len(want)], want) {
		t.Errorf("options % x, want the value split 255 + 45", opts[:len(want)])
	}
	back, err := Parse(b)
	if err != nil || !bytes.Equal(back.Options[OptDomainSearch], long) {
		t.Errorf("parsed back %d bytes (%v), want the 300 joined", len(back.Options[OptDomainSearch]), err)
	}
}

func TestMarshalErrors(t *testing.T) {
	for name, p := range map[string]*Packet{
		"IPv6 address":  {YIAddr: net.ParseIP("fd00::1")},
		"long chaddr":   {CHAddr: make(net.HardwareAddr, 17)},
		"long file":     {File: strings.Repeat("f", 128)},
		"pad as option": {Options: Options{OptPad: {1}}},
	} {
		if _, err := p.Marshal(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Requests are not padded.
	b, err := (&Packet{Op: OpRequest, Options: Options{OptMessageType: {1}}}).Marshal()
	if err != nil || len(b) != minPacketLen+4 {
		t.Errorf("request of %d bytes (%v), want %d", len(b), err, minPacketLen+4)
	}
}

func TestSearchList(t *testing.T) {
	got, err := searchList([]string{"ns1.svc.cluster.local", "example.com.", ""})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("\x03ns1\x03svc\x07cluster\x05local\x00\x07example\x03com\x00")
	if !bytes.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
	for _, bad := range []string{"a..b", strings.Repeat("x", 64) + ".com"} {
		if _, err := searchList([]string{bad}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestMessageTypeString(t *testing.T) {
	if Discover.String() != "DISCOVER" || MessageType(99).String() != "type 99" {
		t.Errorf("%s, %s", Discover, MessageType(99))
	}
}
