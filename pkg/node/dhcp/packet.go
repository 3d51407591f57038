package dhcp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sort"
)

// BOOTP operations.
const (
	// OpRequest is a client's message.
	OpRequest byte = 1
	// OpReply is a server's message.
	OpReply byte = 2
)

const (
	// headerLen is the fixed BOOTP header before the magic cookie.
	headerLen = 236
	// minPacketLen is the header, the magic cookie and nothing else.
	minPacketLen = headerLen + 4
	// htypeEthernet is the hardware type of Ethernet (10 Mb and up).
	htypeEthernet = 1
	// flagBroadcast asks the server to broadcast its answer.
	flagBroadcast = 0x8000
	// minReplyLen pads replies to the 300 bytes of a BOOTP message, which
	// some old clients require.
	minReplyLen = 300
)

// magicCookie starts the options field of a DHCP message (RFC 2131 3).
var magicCookie = []byte{99, 130, 83, 99}

// Packet is a DHCP message (RFC 2131 2). Options holds every option's whole
// value: an option split over several instances (RFC 3396) is joined when
// parsed and split again when marshalled.
type Packet struct {
	Op     byte
	HType  byte
	HLen   byte
	Hops   byte
	XID    uint32
	Secs   uint16
	Flags  uint16
	CIAddr net.IP
	YIAddr net.IP
	SIAddr net.IP
	GIAddr net.IP
	// CHAddr is the client's hardware address (HLen bytes of the field).
	CHAddr net.HardwareAddr
	// SName and File are the server host name and boot file name fields.
	SName string
	File  string
	// Options maps option codes to their values.
	Options Options
}

// Options are DHCP options by code.
type Options map[byte][]byte

// MessageType is the value of option 53, or 0 when absent or malformed.
func (p *Packet) MessageType() MessageType {
	if v := p.Options[OptMessageType]; len(v) == 1 {
		return MessageType(v[0])
	}
	return 0
}

// Parse decodes a DHCP message.
func Parse(b []byte) (*Packet, error) {
	if len(b) < minPacketLen {
		return nil, fmt.Errorf("dhcp: message of %d bytes, shorter than %d", len(b), minPacketLen)
	}
	if !bytes.Equal(b[headerLen:minPacketLen], magicCookie) {
		return nil, errors.New("dhcp: no magic cookie (a BOOTP message?)")
	}
	p := &Packet{
		Op: b[0], HType: b[1], HLen: b[2], Hops: b[3],
		XID:    binary.BigEndian.Uint32(b[4:8]),
		Secs:   binary.BigEndian.Uint16(b[8:10]),
		Flags:  binary.BigEndian.Uint16(b[10:12]),
		CIAddr: ip4(b[12:16]),
		YIAddr: ip4(b[16:20]),
		SIAddr: ip4(b[20:24]),
		GIAddr: ip4(b[24:28]),
		SName:  cString(b[44:108]),
		File:   cString(b[108:236]),
	}
	hlen := int(p.HLen)
	if hlen > 16 {
		return nil, fmt.Errorf("dhcp: hardware address length %d exceeds 16", hlen)
	}
	p.CHAddr = append(net.HardwareAddr(nil), b[28:28+hlen]...)
	opts, err := parseOptions(b[minPacketLen:])
	if err != nil {
		return nil, err
	}
	p.Options = opts
	return p, nil
}

// parseOptions reads options up to the end option (or the end of the data),
// joining repeated instances of one code.
func parseOptions(b []byte) (Options, error) {
	opts := Options{}
	for i := 0; i < len(b); {
		code := b[i]
		switch code {
		case OptPad:
			i++
			continue
		case OptEnd:
			return opts, nil
		}
		if i+1 >= len(b) {
			return nil, fmt.Errorf("dhcp: option %d has no length", code)
		}
		n := int(b[i+1])
		if i+2+n > len(b) {
			return nil, fmt.Errorf("dhcp: option %d of %d bytes runs past the message", code, n)
		}
		opts[code] = append(opts[code], b[i+2:i+2+n]...)
		i += 2 + n
	}
	return opts, nil
}

// Marshal encodes the message: option 53 first, then the others by code,
// values longer than 255 bytes split over several instances; replies are
// padded to 300 bytes.
func (p *Packet) Marshal() ([]byte, error) {
	if len(p.CHAddr) > 16 {
		return nil, fmt.Errorf("dhcp: hardware address of %d bytes exceeds 16", len(p.CHAddr))
	}
	if len(p.SName) > 63 || len(p.File) > 127 {
		return nil, errors.New("dhcp: server name or file name too long for the header")
	}
	b := make([]byte, minPacketLen, 576)
	b[0], b[1], b[2], b[3] = p.Op, p.HType, p.HLen, p.Hops
	binary.BigEndian.PutUint32(b[4:8], p.XID)
	binary.BigEndian.PutUint16(b[8:10], p.Secs)
	binary.BigEndian.PutUint16(b[10:12], p.Flags)
	for i, a := range []net.IP{p.CIAddr, p.YIAddr, p.SIAddr, p.GIAddr} {
		if a != nil {
			v4 := a.To4()
			if v4 == nil {
				return nil, fmt.Errorf("dhcp: %v is not an IPv4 address", a)
			}
			copy(b[12+4*i:16+4*i], v4)
		}
	}
	copy(b[28:44], p.CHAddr)
	copy(b[44:108], p.SName)
	copy(b[108:236], p.File)
	copy(b[headerLen:], magicCookie)

	codes := make([]int, 0, len(p.Options))
	for c := range p.Options {
		if c == OptPad || c == OptEnd {
			return nil, fmt.Errorf("dhcp: option code %d cannot carry a value", c)
		}
		codes = append(codes, int(c))
	}
	sort.Slice(codes, func(i, j int) bool {
		if (codes[i] == int(OptMessageType)) != (codes[j] == int(OptMessageType)) {
			return codes[i] == int(OptMessageType)
		}
		return codes[i] < codes[j]
	})
	for _, c := range codes {
		v := p.Options[byte(c)]
		for {
			n := min(len(v), 255)
			b = append(b, byte(c), byte(n))
			b = append(b, v[:n]...)
			v = v[n:]
			if len(v) == 0 {
				break
			}
		}
	}
	b = append(b, OptEnd)
	if p.Op == OpReply {
		for len(b) < minReplyLen {
			b = append(b, OptPad)
		}
	}
	return b, nil
}

// ip4 copies a 4-byte address; 0.0.0.0 becomes nil.
func ip4(b []byte) net.IP {
	ip := net.IPv4(b[0], b[1], b[2], b[3]).To4()
	if ip.Equal(net.IPv4zero) {
		return nil
	}
	return ip
}

// cString is a NUL-terminated string in a fixed field.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
