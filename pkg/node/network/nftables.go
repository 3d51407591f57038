package network

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ruleset is the nft script that replaces the table of the plan's rules in
// one transaction: the first two lines make sure the table exists so that
// deleting it cannot fail, the rest recreates it. Applying it twice leaves
// the same single table.
//
// Chains (KubeVirt's rules under other names):
//   - prerouting: what comes in on the pod interface goes to `inbound`,
//     which DNATs it to the guest (every port, or the declared ones);
//   - output: connections from the pod itself to 127.0.0.1 (kubectl
//     port-forward enters the pod's namespace) are DNATed to the guest too;
//   - postrouting: the guest's own traffic is masqueraded to the pod's
//     address; what leaves on the bridge from 127.0.0.1 gets the gateway
//     as source (the guest must be able to answer it) in `from_loopback`.
func ruleset(p *Plan) string {
	guest := p.NIC.Guest.String()
	gateway := p.NIC.Gateway.String()
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("table ip %s", Table)
	w("delete table ip %s", Table)
	w("table ip %s {", Table)
	w("\tchain prerouting {")
	w("\t\ttype nat hook prerouting priority -100; policy accept;")
	w("\t\tiifname %q counter jump inbound", p.PodInterface)
	w("\t}")
	w("\tchain output {")
	w("\t\ttype nat hook output priority -100; policy accept;")
	for _, m := range portMatches(p) {
		w("\t\tip daddr 127.0.0.1 %scounter dnat to %s", m, guest)
	}
	w("\t}")
	w("\tchain postrouting {")
	w("\t\ttype nat hook postrouting priority 100; policy accept;")
	w("\t\tip saddr %s counter masquerade", guest)
	w("\t\toifname %q counter jump from_loopback", p.Bridge)
	w("\t}")
	w("\tchain inbound {")
	for _, m := range portMatches(p) {
		w("\t\t%scounter dnat to %s", m, guest)
	}
	w("\t}")
	w("\tchain from_loopback {")
	for _, m := range portMatches(p) {
		w("\t\tip saddr 127.0.0.1 %scounter snat to %s", m, gateway)
	}
	w("\t}")
	w("}")
	return b.String()
}

// portMatches are the port matches of the declared ports, one per protocol
// (each ending in a space); one empty match (every port and protocol) when
// none are declared.
func portMatches(p *Plan) []string {
	if len(p.NIC.Ports) == 0 {
		return []string{""}
	}
	byProto := map[string]map[int32]bool{}
	for _, port := range p.NIC.Ports {
		proto := strings.ToLower(port.Protocol)
		if proto == "" {
			proto = "tcp"
		}
		if byProto[proto] == nil {
			byProto[proto] = map[int32]bool{}
		}
		byProto[proto][port.Port] = true
	}
	protos := make([]string, 0, len(byProto))
	for proto := range byProto {
		protos = append(protos, proto)
	}
	sort.Strings(protos)
	var out []string
	for _, proto := range protos {
		ports := make([]int, 0, len(byProto[proto]))
		for port := range byProto[proto] {
			ports = append(ports, int(port))
		}
		sort.Ints(ports)
		list := make([]string, len(ports))
		for i, port := range ports {
			list[i] = strconv.Itoa(port)
		}
		out = append(out, fmt.Sprintf("%s dport { %s } ", proto, strings.Join(list, ", ")))
	}
	return out
}
