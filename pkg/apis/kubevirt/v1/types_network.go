package v1

// Interface is a network interface of the guest. It attaches to the network
// of the same name.
type Interface struct {
	// Name of the interface; it must match a network's name.
	Name string `json:"name"`
	// Model is the emulated NIC: e1000, e1000e, igb, ne2k_pci, pcnet, rtl8139 or virtio.
	// Defaults to virtio.
	// +optional
	Model string `json:"model,omitempty"`
	// InterfaceBindingMethod says how the interface connects to the pod's
	// network: bridge, masquerade, sriov, ... Defaults to masquerade.
	InterfaceBindingMethod `json:",inline"`
	// Binding uses a network binding plugin instead of a built-in method.
	// +optional
	Binding *PluginBinding `json:"binding,omitempty"`
	// Ports are the ports forwarded to the guest (masquerade); empty forwards all.
	// +optional
	// +listType=atomic
	Ports []Port `json:"ports,omitempty"`
	// MacAddress is the interface's MAC address, e.g. de:ad:00:00:be:af.
	// +optional
	MacAddress string `json:"macAddress,omitempty"`
	// BootOrder is the interface's position in the boot order (PXE); the lowest boots first.
	// +optional
	BootOrder *int32 `json:"bootOrder,omitempty"`
	// PciAddress places the interface at this PCI address, e.g. 0000:81:01.0.
	// +optional
	PciAddress string `json:"pciAddress,omitempty"`
	// DHCPOptions are extra options of the built-in DHCP server.
	// +optional
	DHCPOptions *DHCPOptions `json:"dhcpOptions,omitempty"`
	// Tag is exposed to the guest through device metadata.
	// +optional
	Tag string `json:"tag,omitempty"`
	// ACPIIndex gives the interface a stable ACPI index (and so a stable name in the guest).
	// +optional
	ACPIIndex int32 `json:"acpiIndex,omitempty"`
	// State is the wanted link state: up, down or absent (hot-unplugged).
	// +optional
	State InterfaceState `json:"state,omitempty"`
}

// InterfaceState is the wanted state of an interface.
type InterfaceState string

// Interface states.
const (
	// InterfaceStateAbsent hot-unplugs the interface.
	InterfaceStateAbsent InterfaceState = "absent"
	// InterfaceStateLinkUp sets the link up.
	InterfaceStateLinkUp InterfaceState = "up"
	// InterfaceStateLinkDown sets the link down.
	InterfaceStateLinkDown InterfaceState = "down"
)

// InterfaceBindingMethod says how an interface connects to the pod's
// network; at most one member is set.
type InterfaceBindingMethod struct {
	// Bridge connects the interface to a bridge with the pod interface; the
	// guest takes over the pod's IP address.
	// +optional
	Bridge *InterfaceBridge `json:"bridge,omitempty"`
	// DeprecatedSlirp is the user-mode network stack (deprecated).
	// +optional
	DeprecatedSlirp *DeprecatedInterfaceSlirp `json:"slirp,omitempty"`
	// Masquerade NATs the guest behind the pod's IP address.
	// +optional
	Masquerade *InterfaceMasquerade `json:"masquerade,omitempty"`
	// SRIOV passes an SR-IOV virtual function through.
	// +optional
	SRIOV *InterfaceSRIOV `json:"sriov,omitempty"`
	// DeprecatedMacvtap connects through macvtap (deprecated).
	// +optional
	DeprecatedMacvtap *DeprecatedInterfaceMacvtap `json:"macvtap,omitempty"`
	// DeprecatedPasst connects through passt, a user-mode stack (deprecated; use the passt binding plugin).
	// +optional
	DeprecatedPasst *DeprecatedInterfacePasst `json:"passt,omitempty"`
}

// InterfaceBridge selects the bridge binding.
type InterfaceBridge struct{}

// DeprecatedInterfaceSlirp selects the slirp binding.
type DeprecatedInterfaceSlirp struct{}

// InterfaceMasquerade selects the masquerade binding.
type InterfaceMasquerade struct{}

// InterfaceSRIOV selects the SR-IOV binding.
type InterfaceSRIOV struct{}

// DeprecatedInterfaceMacvtap selects the macvtap binding.
type DeprecatedInterfaceMacvtap struct{}

// DeprecatedInterfacePasst selects the passt binding.
type DeprecatedInterfacePasst struct{}

// PluginBinding names a network binding plugin.
type PluginBinding struct {
	// Name of the plugin, as registered in the cluster configuration.
	Name string `json:"name"`
}

// Port is a port forwarded to the guest.
type Port struct {
	// Name of the port.
	// +optional
	Name string `json:"name,omitempty"`
	// Protocol is TCP or UDP. Defaults to TCP.
	// +optional
	Protocol string `json:"protocol,omitempty"`
	// Port number, 1 to 65535.
	Port int32 `json:"port"`
}

// DHCPOptions are extra options of the built-in DHCP server.
type DHCPOptions struct {
	// BootFileName is the boot file offered (option 67).
	// +optional
	BootFileName string `json:"bootFileName,omitempty"`
	// TFTPServerName is the TFTP server offered (option 66).
	// +optional
	TFTPServerName string `json:"tftpServerName,omitempty"`
	// NTPServers are the NTP servers offered (option 42).
	// +optional
	// +listType=atomic
	NTPServers []string `json:"ntpServers,omitempty"`
	// PrivateOptions are site-specific options (224 to 254).
	// +optional
	// +listType=atomic
	PrivateOptions []DHCPPrivateOptions `json:"privateOptions,omitempty"`
}

// DHCPPrivateOptions is one site-specific DHCP option.
type DHCPPrivateOptions struct {
	// Option number, 224 to 254.
	Option int32 `json:"option"`
	// Value of the option.
	Value string `json:"value"`
}

// Network is a network the guest's interfaces can attach to.
type Network struct {
	// Name of the network; interfaces refer to it.
	Name string `json:"name"`
	// NetworkSource says which network it is; exactly one member is set.
	NetworkSource `json:",inline"`
}

// NetworkSource says which network a Network is; exactly one member is set.
type NetworkSource struct {
	// Pod is the pod's own (default) network.
	// +optional
	Pod *PodNetwork `json:"pod,omitempty"`
	// Multus is a secondary network defined by a NetworkAttachmentDefinition.
	// +optional
	Multus *MultusNetwork `json:"multus,omitempty"`
}

// PodNetwork is the pod's own network.
type PodNetwork struct {
	// VMNetworkCIDR is the guest's IPv4 subnet under masquerade. Defaults to 10.0.2.0/24.
	// +optional
	VMNetworkCIDR string `json:"vmNetworkCIDR,omitempty"`
	// VMIPv6NetworkCIDR is the guest's IPv6 subnet under masquerade. Defaults to fd10:0:2::/120.
	// +optional
	VMIPv6NetworkCIDR string `json:"vmIPv6NetworkCIDR,omitempty"`
}

// MultusNetwork is a secondary network attached through Multus.
type MultusNetwork struct {
	// NetworkName is the NetworkAttachmentDefinition, as <name> or <namespace>/<name>.
	NetworkName string `json:"networkName"`
	// Default makes this network the pod's default network instead of the cluster network.
	// +optional
	Default bool `json:"default,omitempty"`
}
