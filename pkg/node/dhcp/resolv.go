package dhcp

import (
	"bufio"
	"io"
	"net"
	"strings"
)

// Resolver is the DNS part of the guest's configuration.
type Resolver struct {
	// Servers are the IPv4 name servers.
	Servers []net.IP
	// Search are the search domains.
	Search []string
}

// ParseResolvConf reads the name servers and search domains of a
// resolv.conf. IPv6 and loopback servers are left out: the guest reaches
// its resolvers through the pod's NAT, which neither crosses. As in the
// resolver, the last search (or domain) line wins.
func ParseResolvConf(r io.Reader) (Resolver, error) {
	var out Resolver
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			ip := net.ParseIP(f[1])
			if ip == nil || ip.To4() == nil || ip.IsLoopback() {
				continue
			}
			out.Servers = append(out.Servers, ip.To4())
		case "search":
			out.Search = append([]string(nil), f[1:]...)
		case "domain":
			out.Search = []string{f[1]}
		}
	}
	return out, sc.Err()
}
