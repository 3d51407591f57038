package convert

// GuestAgentChannel is the virtio-serial port name QEMU's guest agent (qemu-ga) opens in the
// guest; libvirt connects to it and answers guest-info requests (the VMI's guestOSInfo).
const GuestAgentChannel = "org.qemu.guest_agent.0"

// Channel is a host↔guest channel.
type Channel struct {
	// Type is "unix": libvirt picks the socket path in its own state directory.
	Type string `xml:"type,attr"`
	// Target is the guest side.
	Target ChannelTarget `xml:"target"`
}

// ChannelTarget is the guest side of a channel.
type ChannelTarget struct {
	// Type is "virtio" (a virtio-serial port).
	Type string `xml:"type,attr"`
	// Name is the port's name in the guest.
	Name string `xml:"name,attr"`
}

// guestAgentChannel is the channel of the guest agent, which every domain gets, as in KubeVirt:
// a guest that runs qemu-ga reports its OS; one that does not leaves the port unused.
func guestAgentChannel() []Channel {
	return []Channel{{Type: "unix", Target: ChannelTarget{Type: "virtio", Name: GuestAgentChannel}}}
}
