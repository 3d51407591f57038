package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/streamserver"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

var (
	_ streamserver.Streams      = &guestStreams{}
	_ streamserver.GuestQueries = &guestStreams{}
)

// guestStreams open the console, VNC and port-forward streams of the stream
// server to the guests of this node and answer its screenshot and guest agent
// queries.
type guestStreams struct {
	domains domainFinder
	// dialGuest connects to a guest's port (nil: no port forwarding).
	dialGuest DialGuestFunc
}

// Console implements streamserver.Streams: a session on the VMI's shared console.
func (g *guestStreams) Console(_ context.Context, namespace, name string, uid types.UID) (io.ReadWriteCloser, error) {
	l, err := g.domains.running(namespace, name, uid)
	if err != nil {
		return nil, err
	}
	return l.hub.Attach()
}

// VNC implements streamserver.Streams: a new connection to QEMU's VNC socket.
func (g *guestStreams) VNC(ctx context.Context, namespace, name string, uid types.UID) (net.Conn, error) {
	l, err := g.domains.running(namespace, name, uid)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, "unix", l.fs.Private.Path(podfs.VNCSocket))
}

// PortForward implements streamserver.Streams: a new connection to a port of the guest, made
// from inside its launcher pod.
func (g *guestStreams) PortForward(ctx context.Context, namespace, name string, uid types.UID, port streams.ForwardedPort) (net.Conn, error) {
	l, err := g.domains.running(namespace, name, uid)
	if err != nil {
		return nil, err
	}
	if g.dialGuest == nil {
		return nil, fmt.Errorf("the node agent of node %s cannot forward ports: %w", g.domains.node, streamserver.ErrConflict)
	}
	conn, err := g.dialGuest(ctx, l.fs.Private.Path(podfs.LibvirtSocket), port)
	if err != nil {
		// The guest refused or did not answer: the caller asked for a port nothing serves.
		return nil, fmt.Errorf("connecting to port %s of VMI %s/%s: %v: %w", port, namespace, name, err, streamserver.ErrConflict)
	}
	return conn, nil
}

// GuestAgentInfo implements streamserver.GuestQueries: what the guest agent reports, in KubeVirt's
// kind. A guest without a (responsive) guest agent is a conflict, as in KubeVirt.
func (g *guestStreams) GuestAgentInfo(_ context.Context, namespace, name string, uid types.UID) (*kubevirtv1.VirtualMachineInstanceGuestAgentInfo, error) {
	l, err := g.domains.running(namespace, name, uid)
	if err != nil {
		return nil, err
	}
	gi, err := l.conn.GuestInfo(l.domain)
	if errors.Is(err, virt.ErrNoGuestAgent) {
		return nil, fmt.Errorf("VMI %s/%s does not have guest agent connected: %w", namespace, name, streamserver.ErrConflict)
	}
	if err != nil {
		return nil, err
	}
	return guestAgentInfo(gi), nil
}

// guestAgentInfo is KubeVirt's form of what libvirt read from the guest agent: the time zone as
// "name, offset", login times in seconds.
func guestAgentInfo(gi virt.GuestInfo) *kubevirtv1.VirtualMachineInstanceGuestAgentInfo {
	out := &kubevirtv1.VirtualMachineInstanceGuestAgentInfo{
		GAVersion:      gi.AgentVersion,
		Hostname:       gi.Hostname,
		OS:             guestOSInfo(gi.OS),
		FSFreezeStatus: gi.FSFreezeStatus,
	}
	for _, c := range gi.Commands {
		out.SupportedCommands = append(out.SupportedCommands, kubevirtv1.GuestAgentCommandInfo{Name: c.Name, Enabled: c.Enabled})
	}
	if gi.TimezoneName != "" {
		out.Timezone = fmt.Sprintf("%s, %d", gi.TimezoneName, gi.TimezoneOffset)
	}
	for _, u := range gi.Users {
		out.UserList = append(out.UserList, kubevirtv1.VirtualMachineInstanceGuestOSUser{
			UserName: u.Name, Domain: u.Domain, LoginTime: float64(u.LoginTime) / 1000})
	}
	for _, fs := range gi.FileSystems {
		f := kubevirtv1.VirtualMachineInstanceFileSystem{DiskName: fs.Name, MountPoint: fs.MountPoint,
			FileSystemType: fs.Type, UsedBytes: int(fs.UsedBytes), TotalBytes: int(fs.TotalBytes)}
		for _, serial := range fs.DiskSerials {
			f.Disk = append(f.Disk, kubevirtv1.VirtualMachineInstanceFileSystemDisk{Serial: serial})
		}
		out.FSInfo.Filesystems = append(out.FSInfo.Filesystems, f)
	}
	return out
}
