package network

import (
	"fmt"
	"net"

	"k8s.io/apimachinery/pkg/util/validation"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/dhcp"
)

// Names and addresses inside the launcher pod (KubeVirt's).
const (
	// PodInterface is the pod's interface on the pod network.
	PodInterface = "eth0"
	// Bridge is the bridge between the pod and the guest's tap.
	Bridge = "k6t-" + PodInterface
	// BridgeMAC is the bridge's fixed MAC.
	BridgeMAC = "02:00:00:00:00:00"
	// Table is the nftables table (family ip) holding the NAT rules.
	Table = "nativevirt"
	// tapOwner is the uid and gid owning the tap: QEMU's user in the launcher.
	tapOwner = 0
)

// Plan is what Prepare builds in one pod.
type Plan struct {
	// PodInterface is the pod's interface (eth0).
	PodInterface string
	// Bridge is the bridge (k6t-eth0).
	Bridge string
	// NIC is the guest interface.
	NIC convert.PodInterface
	// Hostname is the guest's host name, handed out by DHCP.
	Hostname string
}

// PlanFor is the plan of vmi's pod network; nil when the instance has no
// interface on the pod network.
func PlanFor(vmi *kubevirtv1.VirtualMachineInstance) (*Plan, error) {
	nics, err := convert.PodInterfaces(vmi)
	if err != nil {
		return nil, err
	}
	switch len(nics) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, fmt.Errorf("%d interfaces on the pod network; the pod network takes one", len(nics))
	}
	return &Plan{PodInterface: PodInterface, Bridge: Bridge, NIC: nics[0], Hostname: hostname(vmi)}, nil
}

// hostname is the guest's host name as the launcher pod has it: the spec's,
// else the instance's name when it is a valid host name.
func hostname(vmi *kubevirtv1.VirtualMachineInstance) string {
	if vmi.Spec.Hostname != "" {
		return vmi.Spec.Hostname
	}
	if len(validation.IsDNS1123Label(vmi.Name)) == 0 {
		return vmi.Name
	}
	return ""
}

// gatewayCIDR is the bridge's address with the VM network's prefix.
func (p *Plan) gatewayCIDR() string {
	return fmt.Sprintf("%s/%d", p.NIC.Gateway, p.NIC.PrefixLength)
}

// DHCPConfig is the guest's DHCP configuration for a pod interface of MTU mtu.
func (p *Plan) DHCPConfig(mtu int) *dhcp.Config {
	c := &dhcp.Config{
		Interface:    p.Bridge,
		ServerIP:     p.NIC.Gateway,
		ClientIP:     p.NIC.Guest,
		PrefixLength: p.NIC.PrefixLength,
		ClientMAC:    p.NIC.MAC,
		MTU:          mtu,
		Hostname:     p.Hostname,
	}
	setDHCPOptions(c, p.NIC.DHCPOptions)
	return c
}

// setDHCPOptions adds an interface's extra DHCP options to c.
func setDHCPOptions(c *dhcp.Config, o *kubevirtv1.DHCPOptions) {
	if o == nil {
		return
	}
	c.BootFileName, c.TFTPServerName = o.BootFileName, o.TFTPServerName
	for _, s := range o.NTPServers {
		if ip := net.ParseIP(s).To4(); ip != nil {
			c.NTPServers = append(c.NTPServers, ip)
		}
	}
	for _, po := range o.PrivateOptions {
		c.PrivateOptions = append(c.PrivateOptions, dhcp.PrivateOption{Code: byte(po.Option), Value: po.Value})
	}
}
