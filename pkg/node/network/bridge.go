package network

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/dhcp"
)

// bridgeServerNet is where the bridges of secondary networks take a link-local address of their
// own (169.254.75.10 + the interface's index, /32, as KubeVirt does): the source and server
// identifier of the DHCP answers, never a router.
var bridgeServerNet = net.IPv4(169, 254, 75, 10).To4()

// BridgeDHCPFile is the DHCP configuration file of a secondary network's bridge, in the
// launcher's private directory beside dhcp.ConfigFile (the launcher serves every dhcp*.json).
func BridgeDHCPFile(bridge string) string { return "dhcp-" + bridge + ".json" }

// bridgeServerIP is the bridge address of the i-th bridge interface.
func bridgeServerIP(i int) net.IP {
	ip := append(net.IP{}, bridgeServerNet...)
	ip[3] += byte(i)
	return ip
}

// podInterfaceAddress is the first IPv4 address of a link, with its prefix length; nil when it
// has none.
func podInterfaceAddress(l link) *net.IPNet {
	for _, a := range l.Addrs {
		if a.Family != "inet" {
			continue
		}
		if ip := net.ParseIP(a.Local).To4(); ip != nil {
			return &net.IPNet{IP: ip, Mask: net.CIDRMask(a.PrefixLen, 32)}
		}
	}
	return nil
}

// distinctMAC is a locally administered MAC derived from mac, for a pod interface that Multus
// gave the guest's own MAC: the bridge must not see the guest's MAC on two ports.
func distinctMAC(mac string) string {
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return "02:00:00:00:00:01"
	}
	out := append(net.HardwareAddr{}, hw...)
	out[0] = (out[0] | 0x02) &^ 0x01
	out[5] ^= 0xff
	return out.String()
}

// bridgeCommands are the `ip -batch` lines that bring one bridge interface to the plan: the
// pod interface Multus made and a tap on a bridge of their own, the pod interface without its
// addresses (the guest takes them), the bridge with its link-local DHCP server address. It also
// returns the pod interface's IPv4 address (nil once it was moved) and MTU.
func bridgeCommands(b convert.BridgeInterface, server net.IP, links map[string]link) ([]string, *net.IPNet, int, error) {
	pod, ok := links[b.PodInterface]
	if !ok {
		return nil, nil, 0, fmt.Errorf("the pod has no interface %s for network %s (did Multus attach it?)", b.PodInterface, b.Name)
	}
	mtu := pod.MTU
	if mtu <= 0 {
		return nil, nil, 0, fmt.Errorf("the pod's interface %s reports MTU %d", b.PodInterface, mtu)
	}
	var cmds []string
	br, ok := links[b.Bridge]
	switch {
	case !ok:
		cmds = append(cmds, "link add name "+b.Bridge+" type bridge")
	case br.kind() != "bridge":
		return nil, nil, 0, fmt.Errorf("the pod's link %s is a %q, not a bridge", b.Bridge, br.kind())
	}
	tap, err := tapCommands(b.Tap, b.Queues, links)
	if err != nil {
		return nil, nil, 0, err
	}
	cmds = append(cmds, tap...)
	if strings.EqualFold(pod.Address, b.MAC) {
		cmds = append(cmds, "link set dev "+b.PodInterface+" address "+distinctMAC(b.MAC))
	}
	m := strconv.Itoa(mtu)
	cmds = append(cmds,
		"link set dev "+b.Bridge+" mtu "+m+" up",
		"link set dev "+b.PodInterface+" master "+b.Bridge+" up",
		"link set dev "+b.Tap+" master "+b.Bridge+" mtu "+m+" up",
		"address flush dev "+b.PodInterface,
		"address replace "+server.String()+"/32 dev "+b.Bridge,
	)
	return cmds, podInterfaceAddress(pod), mtu, nil
}

// tapCommands create the tap dev for queues queue pairs when it is missing (or left with
// another queue count by an attempt whose QEMU is gone).
func tapCommands(dev string, queues uint32, links map[string]link) ([]string, error) {
	multiQueue := queues > 1
	tap, ok := links[dev]
	var cmds []string
	switch {
	case !ok:
	case tap.kind() != "tun" || tap.LinkInfo.Tun == nil || tap.LinkInfo.Tun.Type != "tap":
		return nil, fmt.Errorf("the pod's link %s is not a tap device", dev)
	case tap.LinkInfo.Tun.MultiQueue != multiQueue && contains(tap.Flags, "LOWER_UP"):
		return nil, fmt.Errorf("the pod's tap device %s is in use with another queue count", dev)
	case tap.LinkInfo.Tun.MultiQueue != multiQueue:
		cmds = append(cmds, "link delete dev "+dev)
		ok = false
	}
	if !ok {
		owner := strconv.Itoa(tapOwner)
		add := "tuntap add dev " + dev + " mode tap user " + owner + " group " + owner
		if multiQueue {
			add += " multi_queue"
		}
		cmds = append(cmds, add)
	}
	return cmds, nil
}

// ApplyBridges brings the namespace r runs in to the bridge interfaces of vmi and writes the
// DHCP configuration of each whose network gave the pod interface an address (its IPAM) into
// runDir: the guest gets that address, with neither router nor DNS servers (the pod network
// has those). A network without IPAM gets no DHCP. Idempotent: once the address was moved to
// the guest, the configuration written before stands.
func ApplyBridges(ctx context.Context, r Runner, vmi *kubevirtv1.VirtualMachineInstance, bridges []convert.BridgeInterface, runDir string) error {
	out, err := r.Run(ctx, nil, "ip", "-json", "-details", "address", "show")
	if err != nil {
		return err
	}
	links, err := parseLinks(out)
	if err != nil {
		return err
	}
	var cmds []string
	var configs []*dhcp.Config
	for i, b := range bridges {
		server := bridgeServerIP(i)
		c, addr, mtu, err := bridgeCommands(b, server, links)
		if err != nil {
			return err
		}
		cmds = append(cmds, c...)
		if addr == nil {
			continue
		}
		ones, _ := addr.Mask.Size()
		cfg := &dhcp.Config{Interface: b.Bridge, ServerIP: server, ClientIP: addr.IP, PrefixLength: ones,
			ClientMAC: b.MAC, MTU: mtu, Hostname: hostname(vmi), NoRouter: true}
		setDHCPOptions(cfg, b.DHCPOptions)
		configs = append(configs, cfg)
	}
	if len(cmds) == 0 {
		return nil
	}
	// The configurations first: once the addresses are flushed, they are the only record.
	for _, cfg := range configs {
		if err := dhcp.WriteConfigAs(runDir, BridgeDHCPFile(cfg.Interface), cfg); err != nil {
			return fmt.Errorf("writing the DHCP configuration of %s: %w", cfg.Interface, err)
		}
	}
	if _, err := r.Run(ctx, []byte(strings.Join(cmds, "\n")+"\n"), "ip", "-batch", "-"); err != nil {
		return err
	}
	return nil
}
