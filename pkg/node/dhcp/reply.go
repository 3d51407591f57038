package dhcp

import (
	"net"
	"strings"
)

// Answer is the server's reply to one request and where it goes.
type Answer struct {
	// Packet is the reply.
	Packet *Packet
	// Dest is the reply's destination address (port 68 on the wire).
	Dest net.IP
}

// Responder computes replies for the one client of a configuration.
type Responder struct {
	cfg      Config
	resolver Resolver
	mac      net.HardwareAddr
}

// NewResponder checks cfg and returns a responder for it.
func NewResponder(cfg Config, resolver Resolver) (*Responder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.LeaseSeconds == 0 {
		cfg.LeaseSeconds = DefaultLeaseSeconds
	}
	mac, _ := net.ParseMAC(cfg.ClientMAC)
	cfg.ServerIP, cfg.ClientIP = cfg.ServerIP.To4(), cfg.ClientIP.To4()
	return &Responder{cfg: cfg, resolver: resolver, mac: mac}, nil
}

// Reply answers req, or returns nil (with the reason) when the request gets
// no answer: not for this server, from another client, or a message a
// server does not answer.
func (r *Responder) Reply(req *Packet) (*Answer, string) {
	if req.Op != OpRequest || req.HType != htypeEthernet || req.HLen != 6 {
		return nil, "not an Ethernet client request"
	}
	if !strings.EqualFold(req.CHAddr.String(), r.mac.String()) {
		return nil, "from " + req.CHAddr.String() + ", not the guest"
	}
	switch t := req.MessageType(); t {
	case Discover:
		return r.lease(req, Offer), ""
	case Request:
		if id := req.Options[OptServerID]; id != nil && !net.IP(id).Equal(r.cfg.ServerIP) {
			return nil, "the client chose server " + net.IP(id).String()
		}
		wanted := req.CIAddr
		if v := req.Options[OptRequestedIP]; len(v) == 4 {
			wanted = net.IP(v)
		}
		if wanted == nil || !wanted.Equal(r.cfg.ClientIP) {
			return r.nak(req), ""
		}
		return r.lease(req, Ack), ""
	case Inform:
		return r.inform(req), ""
	case Decline, Release:
		return nil, t.String() + " needs no answer"
	default:
		return nil, "unexpected " + t.String()
	}
}

// reply is the skeleton of every answer to req.
func (r *Responder) reply(req *Packet, t MessageType) *Packet {
	return &Packet{
		Op: OpReply, HType: req.HType, HLen: req.HLen, XID: req.XID, Flags: req.Flags,
		GIAddr: req.GIAddr, CHAddr: req.CHAddr,
		Options: Options{OptMessageType: {byte(t)}, OptServerID: r.cfg.ServerIP},
	}
}

// lease is an OFFER or ACK of the guest's address with the whole
// configuration. It is broadcast unless the client has an address already
// (a renewal): a client without one cannot answer ARP for a unicast reply.
func (r *Responder) lease(req *Packet, t MessageType) *Answer {
	p := r.reply(req, t)
	p.YIAddr = r.cfg.ClientIP
	p.CIAddr = req.CIAddr
	lease := r.cfg.LeaseSeconds
	p.Options[OptLeaseTime] = uint32Value(lease)
	p.Options[OptRenewalTime] = uint32Value(lease / 2)
	p.Options[OptRebindingTime] = uint32Value(lease / 8 * 7)
	r.addConfig(p)
	dest := net.IPv4bcast
	if req.CIAddr != nil {
		dest = req.CIAddr
	}
	return &Answer{Packet: p, Dest: dest}
}

// inform answers a client that configured its address itself: the
// configuration without a lease, to its address.
func (r *Responder) inform(req *Packet) *Answer {
	p := r.reply(req, Ack)
	p.CIAddr = req.CIAddr
	r.addConfig(p)
	dest := req.CIAddr
	if dest == nil {
		dest = net.IPv4bcast
	}
	return &Answer{Packet: p, Dest: dest}
}

// nak refuses a request for an address that is not the guest's.
func (r *Responder) nak(req *Packet) *Answer {
	p := r.reply(req, Nak)
	p.Options[OptMessage] = []byte("the address is not the guest's " + r.cfg.ClientIP.String())
	return &Answer{Packet: p, Dest: net.IPv4bcast}
}

// addConfig adds the network configuration options.
func (r *Responder) addConfig(p *Packet) {
	c := &r.cfg
	mask := net.CIDRMask(c.PrefixLength, 32)
	p.Options[OptSubnetMask] = []byte(mask)
	if !c.NoRouter {
		p.Options[OptRouter] = c.ServerIP
	}
	bcast := make(net.IP, 4)
	for i := range bcast {
		bcast[i] = c.ClientIP[i] | ^mask[i]
	}
	p.Options[OptBroadcast] = bcast
	if len(r.resolver.Servers) > 0 && !c.NoRouter {
		p.Options[OptDNS] = ipList(r.resolver.Servers)
	}
	if len(r.resolver.Search) > 0 && !c.NoRouter {
		p.Options[OptDomainName] = []byte(r.resolver.Search[0])
		if v, err := searchList(r.resolver.Search); err == nil && len(v) > 0 {
			p.Options[OptDomainSearch] = v
		}
	}
	if c.Hostname != "" {
		p.Options[OptHostname] = []byte(c.Hostname)
	}
	if c.MTU > 0 {
		p.Options[OptMTU] = uint16Value(uint16(c.MTU))
	}
	if len(c.NTPServers) > 0 {
		p.Options[OptNTPServers] = ipList(c.NTPServers)
	}
	if c.TFTPServerName != "" {
		p.Options[OptTFTPServerName] = []byte(c.TFTPServerName)
	}
	if c.BootFileName != "" {
		p.Options[OptBootFileName] = []byte(c.BootFileName)
		if len(c.BootFileName) < 128 {
			p.File = c.BootFileName
		}
	}
	for _, o := range c.PrivateOptions {
		p.Options[o.Code] = []byte(o.Value)
	}
}
