package app

import (
	"context"
	"net"
	"strconv"
	"time"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/agent"
	"github.com/nativevirt/nativevirt/pkg/node/cloudinit"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/network"
	"github.com/nativevirt/nativevirt/pkg/node/qemucaps"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// BuildDomain is the agent's BuildDomainFunc on the converter. Masquerade
// interfaces attach to the tap devices that PrepareNetwork makes in the
// launcher pod before the domain is defined.
func BuildDomain(emulation bool) agent.BuildDomainFunc {
	return func(vmi *kubevirtv1.VirtualMachineInstance, facts agent.DomainFacts) (string, []byte, error) {
		formats := make(map[string]convert.DiskFormat, len(facts.DiskFormats))
		for vol, f := range facts.DiskFormats {
			formats[vol] = convert.DiskFormat(f)
		}
		d, err := convert.Convert(vmi, convert.Context{
			Emulation:     emulation,
			DiskFormats:   formats,
			BlockVolumes:  facts.BlockVolumes,
			SharedVolumes: facts.SharedVolumes,
		})
		if err != nil {
			return "", nil, err
		}
		xml, err := d.Marshal()
		if err != nil {
			return "", nil, err
		}
		return convert.DomainName(vmi.Namespace, vmi.Name), xml, nil
	}
}

// CloudInitISO renders a cloud-init ISO with package cloudinit: NoCloud
// (label cidata) or ConfigDrive (label config-2), with the VMI's metadata and
// the SSH public keys of its access credentials.
func CloudInitISO(kind agent.CloudInitKind, vmi *kubevirtv1.VirtualMachineInstance, data agent.CloudInitData) ([]byte, error) {
	if kind == agent.ConfigDrive {
		return cloudinit.ConfigDriveISO(data.UserData, cloudinit.ConfigDriveMetaData(vmi, data.PublicKeys), data.NetworkData)
	}
	return cloudinit.NoCloudISO(data.UserData, cloudinit.NoCloudMetaData(vmi, data.PublicKeys), data.NetworkData)
}

// PrepareNetwork is the agent's PrepareNetworkFunc on package network: the
// masquerade binding's tap, bridge, NAT and DHCP configuration in the pod.
func PrepareNetwork(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, libvirtSocket, runDir string) ([]string, error) {
	return network.Prepare(ctx, vmi, network.Launcher{LibvirtSocket: libvirtSocket, RunDir: runDir})
}

// DialGuest is the agent's DialGuestFunc on package network: a connection made in the network
// namespace of the launcher pod (the one of the process listening on its libvirt socket) to the
// pod's 127.0.0.1, which the masquerade NAT sends on to the guest.
func DialGuest(ctx context.Context, libvirtSocket string, port streams.ForwardedPort) (net.Conn, error) {
	ns, err := network.SocketPeerNetNS(libvirtSocket)
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	ctx, cancel := context.WithTimeout(ctx, dialGuestTimeout)
	defer cancel()
	return ns.Dial(ctx, port.Protocol, net.JoinHostPort("127.0.0.1", strconv.Itoa(port.Port)))
}

// dialGuestTimeout bounds a connection to a guest port: a port behind the NAT that nothing
// serves may drop the connection attempt instead of refusing it.
const dialGuestTimeout = 10 * time.Second

// SeedCapabilities is the agent's SeedCapabilitiesFunc on package qemucaps: the launcher
// container is the one of the process listening on its libvirt socket (libvirtd).
func SeedCapabilities(s qemucaps.Seeder) agent.SeedCapabilitiesFunc {
	return func(libvirtSocket string) (func() string, error) {
		var sd *qemucaps.Seeded
		err := network.WithSocketPeer(libvirtSocket, func(pid int) error {
			var err error
			sd, err = s.Seed(pid)
			return err
		})
		if err != nil {
			return nil, err
		}
		return func() string {
			defer sd.Close()
			return sd.Outcome()
		}, nil
	}
}
