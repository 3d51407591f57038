package agent

import (
	"context"
	"fmt"
	"net"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// PrepareNetworkFunc prepares the pod network of vmi inside a launcher pod
// (for the masquerade binding: tap device, bridge, NAT and the guest's DHCP
// configuration; package network). libvirtSocket is the launcher's libvirt
// socket and runDir its private directory, as the agent reaches them. It
// must be idempotent: it runs before every definition of the domain. It
// returns the pod's IPs as the pod's interface has them (none when the
// instance has no interface on the pod network).
type PrepareNetworkFunc func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, libvirtSocket, runDir string) ([]string, error)

// network prepares the pod network of vmi in the launcher pod l
// before a domain is defined there. It is the one entry point for every pod
// that is to run the guest (a first start, a retried start, the target pod
// of a migration). A nil prepareNetwork prepares nothing.
func (p *domainPreparer) network(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, l *launcher) error {
	if p.prepareNetwork == nil {
		return nil
	}
	ips, err := p.prepareNetwork(ctx, vmi, l.fs.Private.Path(podfs.LibvirtSocket), l.fs.Private.Path(""))
	if err != nil {
		return fmt.Errorf("preparing the pod network: %w", err)
	}
	l.podIPs = ips
	return nil
}

// DialGuestFunc connects to port of the guest whose launcher pod listens on
// libvirtSocket: to the pod's 127.0.0.1, which the masquerade binding's NAT
// sends on to the guest (package network).
type DialGuestFunc func(ctx context.Context, libvirtSocket string, port streams.ForwardedPort) (net.Conn, error)
