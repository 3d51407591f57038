package network

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/dhcp"
)

// Launcher is a launcher pod as the node agent reaches it.
type Launcher struct {
	// LibvirtSocket is the path of the launcher's libvirt socket.
	LibvirtSocket string
	// RunDir is the path of the launcher's private directory, which
	// receives the DHCP configuration.
	RunDir string
}

// Prepare builds the pod network of vmi in its launcher pod: bridge, tap,
// addresses, sysctls and NAT rules in the pod's network namespace, and the
// DHCP configuration the launcher serves. It is idempotent, and a no-op for
// an instance without an interface on the pod network. The node agent calls
// it before the domain is defined, on every pod that is to run the guest.
// It returns the pod interface's global addresses (the pod's IPs, IPv4
// first), which the node agent reports before the kubelet has written them
// into the pod's status; none without an interface on the pod network.
func Prepare(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, l Launcher) ([]string, error) {
	plan, err := PlanFor(vmi)
	if err != nil {
		return nil, err
	}
	bridges, err := convert.BridgeInterfaces(vmi)
	if err != nil {
		return nil, err
	}
	if plan == nil && len(bridges) == 0 {
		return nil, nil
	}
	ns, err := SocketPeerNetNS(l.LibvirtSocket)
	if err != nil {
		return nil, fmt.Errorf("finding the launcher's network namespace: %w", err)
	}
	defer ns.Close()
	log := klog.FromContext(ctx)
	var podIPs []string
	if plan != nil {
		res, err := apply(ctx, ns, plan)
		if err != nil {
			return nil, fmt.Errorf("preparing the pod network in %s: %w", ns.ID(), err)
		}
		mtu := res.mtu
		podIPs = res.podIPs
		if err := dhcp.WriteConfig(l.RunDir, plan.DHCPConfig(mtu)); err != nil {
			return nil, fmt.Errorf("writing the DHCP configuration: %w", err)
		}
		log.V(2).Info("Pod network prepared", "netns", ns.ID(), "bridge", plan.Bridge, "tap", plan.NIC.Tap,
			"gateway", plan.gatewayCIDR(), "guest", plan.NIC.Guest, "mac", plan.NIC.MAC, "mtu", mtu, "ports", len(plan.NIC.Ports))
	}
	if len(bridges) > 0 {
		if err := ApplyBridges(ctx, ns, vmi, bridges, l.RunDir); err != nil {
			return nil, fmt.Errorf("preparing the secondary networks in %s: %w", ns.ID(), err)
		}
		for _, b := range bridges {
			log.V(2).Info("Secondary network prepared", "netns", ns.ID(), "network", b.Name, "podInterface", b.PodInterface,
				"bridge", b.Bridge, "tap", b.Tap, "mac", b.MAC)
		}
	}
	return podIPs, nil
}

// Apply brings the namespace r runs in to the plan and returns the MTU of the
// pod's interface.
func Apply(ctx context.Context, r Runner, p *Plan) (int, error) {
	res, err := apply(ctx, r, p)
	return res.mtu, err
}

// applied is what apply found: the pod interface's MTU and its global addresses.
type applied struct {
	mtu    int
	podIPs []string
}

func apply(ctx context.Context, r Runner, p *Plan) (applied, error) {
	out, err := r.Run(ctx, nil, "ip", "-json", "-details", "address", "show")
	if err != nil {
		return applied{}, err
	}
	links, err := parseLinks(out)
	if err != nil {
		return applied{}, err
	}
	cmds, mtu, err := linkCommands(p, links)
	if err != nil {
		return applied{}, err
	}
	if _, err := r.Run(ctx, []byte(strings.Join(cmds, "\n")+"\n"), "ip", "-batch", "-"); err != nil {
		return applied{}, err
	}
	if _, err := r.Run(ctx, nil, "sysctl", append([]string{"-q", "-w"}, sysctls(p)...)...); err != nil {
		return applied{}, err
	}
	if _, err := r.Run(ctx, []byte(ruleset(p)), "nft", "-f", "-"); err != nil {
		return applied{}, err
	}
	return applied{mtu: mtu, podIPs: links[p.PodInterface].globalAddresses()}, nil
}
