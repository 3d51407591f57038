package network

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// link is what `ip -json -details address show` tells about one link.
type link struct {
	Name     string    `json:"ifname"`
	MTU      int       `json:"mtu"`
	Master   string    `json:"master"`
	Address  string    `json:"address"`
	Flags    []string  `json:"flags"`
	LinkInfo *linkInfo `json:"linkinfo"`
	Addrs    []addr    `json:"addr_info"`
}

type linkInfo struct {
	Kind string   `json:"info_kind"`
	Tun  *tunInfo `json:"info_data"`
}

// tunInfo is the part of a tun link's details that matters here; other
// kinds' details decode into it harmlessly (no such fields).
type tunInfo struct {
	Type       string `json:"type"`
	MultiQueue bool   `json:"multi_queue"`
}

type addr struct {
	Family    string `json:"family"`
	Local     string `json:"local"`
	PrefixLen int    `json:"prefixlen"`
	Scope     string `json:"scope"`
}

// globalAddresses are the link's addresses of global scope, IPv4 first (as the pod's IPs are
// listed in a dual-stack pod's status).
func (l link) globalAddresses() []string {
	var v4, v6 []string
	for _, a := range l.Addrs {
		if a.Scope != "global" || a.Local == "" {
			continue
		}
		if a.Family == "inet" {
			v4 = append(v4, a.Local)
		} else {
			v6 = append(v6, a.Local)
		}
	}
	return append(v4, v6...)
}

// kind is the link's kind ("bridge", "tun", "veth"), "" for a plain device.
func (l link) kind() string {
	if l.LinkInfo == nil {
		return ""
	}
	return l.LinkInfo.Kind
}

// parseLinks reads `ip -json -details address show`.
func parseLinks(out []byte) (map[string]link, error) {
	var list []link
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("reading the links of the pod: %w", err)
	}
	links := make(map[string]link, len(list))
	for _, l := range list {
		links[l.Name] = l
	}
	return links, nil
}

// linkCommands are the `ip -batch` lines that bring the pod's links to the
// plan, given the links it has, and the MTU they get (the pod interface's).
// Creation happens only for what is missing; the settings are always
// applied (they are idempotent).
func linkCommands(p *Plan, links map[string]link) ([]string, int, error) {
	pod, ok := links[p.PodInterface]
	if !ok {
		return nil, 0, fmt.Errorf("the pod has no interface %s", p.PodInterface)
	}
	mtu := pod.MTU
	if mtu <= 0 {
		return nil, 0, fmt.Errorf("the pod's interface %s reports MTU %d", p.PodInterface, mtu)
	}
	var cmds []string
	br, ok := links[p.Bridge]
	switch {
	case !ok:
		cmds = append(cmds, "link add name "+p.Bridge+" type bridge")
	case br.kind() != "bridge":
		return nil, 0, fmt.Errorf("the pod's link %s is a %q, not a bridge", p.Bridge, br.kind())
	}
	tap, err := tapCommands(p.NIC.Tap, p.NIC.Queues, links)
	if err != nil {
		return nil, 0, err
	}
	cmds = append(cmds, tap...)
	m := strconv.Itoa(mtu)
	cmds = append(cmds,
		"link set dev "+p.Bridge+" address "+BridgeMAC+" mtu "+m+" up",
		"link set dev "+p.NIC.Tap+" master "+p.Bridge+" mtu "+m+" up",
	)
	want := p.gatewayCIDR()
	for _, a := range br.Addrs {
		if a.Family != "inet" {
			continue
		}
		if cidr := a.Local + "/" + strconv.Itoa(a.PrefixLen); cidr != want {
			cmds = append(cmds, "address delete "+cidr+" dev "+p.Bridge)
		}
	}
	cmds = append(cmds, "address replace "+want+" dev "+p.Bridge)
	return cmds, mtu, nil
}

// sysctls are the kernel settings of the pod's namespace the plan needs.
func sysctls(p *Plan) []string {
	return []string{
		"net.ipv4.ip_forward=1",
		"net.ipv4.conf." + p.Bridge + ".route_localnet=1",
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
