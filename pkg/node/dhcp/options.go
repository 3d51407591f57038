package dhcp

import (
	"encoding/binary"
	"fmt"
	"net"
	"strings"
)

// Option codes (RFC 2132 and later).
const (
	OptPad            byte = 0
	OptSubnetMask     byte = 1
	OptRouter         byte = 3
	OptDNS            byte = 6
	OptHostname       byte = 12
	OptDomainName     byte = 15
	OptMTU            byte = 26
	OptBroadcast      byte = 28
	OptNTPServers     byte = 42
	OptRequestedIP    byte = 50
	OptLeaseTime      byte = 51
	OptMessageType    byte = 53
	OptServerID       byte = 54
	OptParameterList  byte = 55
	OptMessage        byte = 56
	OptRenewalTime    byte = 58
	OptRebindingTime  byte = 59
	OptClientID       byte = 61
	OptTFTPServerName byte = 66
	OptBootFileName   byte = 67
	OptDomainSearch   byte = 119
	OptEnd            byte = 255
)

// MessageType is the value of option 53.
type MessageType byte

// Message types (RFC 2132 9.6).
const (
	Discover MessageType = 1
	Offer    MessageType = 2
	Request  MessageType = 3
	Decline  MessageType = 4
	Ack      MessageType = 5
	Nak      MessageType = 6
	Release  MessageType = 7
	Inform   MessageType = 8
)

func (t MessageType) String() string {
	names := map[MessageType]string{Discover: "DISCOVER", Offer: "OFFER", Request: "REQUEST", Decline: "DECLINE",
		Ack: "ACK", Nak: "NAK", Release: "RELEASE", Inform: "INFORM"}
	if n, ok := names[t]; ok {
		return n
	}
	return fmt.Sprintf("type %d", byte(t))
}

// ipList encodes IPv4 addresses one after the other.
func ipList(ips []net.IP) []byte {
	out := make([]byte, 0, 4*len(ips))
	for _, ip := range ips {
		if v4 := ip.To4(); v4 != nil {
			out = append(out, v4...)
		}
	}
	return out
}

// uint32Value is a 32-bit option value (lease and renewal times).
func uint32Value(v uint32) []byte {
	return binary.BigEndian.AppendUint32(nil, v)
}

// uint16Value is a 16-bit option value (MTU).
func uint16Value(v uint16) []byte {
	return binary.BigEndian.AppendUint16(nil, v)
}

// searchList encodes domain names as option 119 wants them (RFC 3397): DNS
// wire-format names, without compression. Names with an empty or over-long
// label are refused.
func searchList(domains []string) ([]byte, error) {
	var out []byte
	for _, d := range domains {
		d = strings.TrimSuffix(d, ".")
		if d == "" {
			continue
		}
		for _, label := range strings.Split(d, ".") {
			if label == "" || len(label) > 63 {
				return nil, fmt.Errorf("dhcp: search domain %q has an empty or over-long label", d)
			}
			out = append(out, byte(len(label)))
			out = append(out, label...)
		}
		out = append(out, 0)
	}
	return out, nil
}
