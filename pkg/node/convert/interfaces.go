package convert

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// DefaultVMNetworkCIDR is the guest subnet of the masquerade binding when
// the pod network sets none; the gateway is its first address, the guest
// its second (10.0.2.1 and 10.0.2.2), as in KubeVirt.
const DefaultVMNetworkCIDR = "10.0.2.0/24"

// nicModels maps the interface models KubeVirt accepts to QEMU device names
// (used by the slirp implementation; libvirt takes the model names as they are).
var nicModels = map[string]string{
	"virtio":   "virtio-net-pci",
	"e1000":    "e1000",
	"e1000e":   "e1000e",
	"igb":      "igb",
	"ne2k_pci": "ne2k_pci",
	"pcnet":    "pcnet",
	"rtl8139":  "rtl8139",
}

// nic is one checked interface with everything both implementations need.
type nic struct {
	iface   *kubevirtv1.Interface
	network *kubevirtv1.PodNetwork
	model   string
	boot    *Boot
	address *Address
	path    *field.Path
}

// netPlan is the result of the interface conversion: libvirt interfaces
// (tap) or QEMU arguments (slirp).
type netPlan struct {
	interfaces []Interface
	qemuArgs   []string
}

// convertInterfaces wires the guest's interfaces to the pod network with the
// masquerade binding, as the context's InterfaceMode says. diskBoot says
// whether some disk has a boot order (see slirpInterface).
func convertInterfaces(vmi *kubevirtv1.VirtualMachineInstance, c Context, vcpus uint32, diskBoot bool) (netPlan, field.ErrorList) {
	spec := &vmi.Spec
	p := field.NewPath("spec", "domain", "devices", "interfaces")
	networks := make(map[string]*kubevirtv1.Network, len(spec.Networks))
	for i := range spec.Networks {
		networks[spec.Networks[i].Name] = &spec.Networks[i]
	}
	devices := &spec.Domain.Devices
	transitional := devices.UseVirtioTransitional != nil && *devices.UseVirtioTransitional
	multiQueue := devices.NetworkInterfaceMultiQueue != nil && *devices.NetworkInterfaceMultiQueue
	var (
		plan netPlan
		errs field.ErrorList
	)
	for i := range devices.Interfaces {
		n, nerrs := checkInterface(&devices.Interfaces[i], networks, p.Index(i))
		if len(nerrs) > 0 {
			errs = append(errs, nerrs...)
			continue
		}
		switch c.InterfaceMode {
		case TapMasquerade:
			tap := c.TapDevices[n.iface.Name]
			if tap == "" {
				tap = TapName(i)
			}
			plan.interfaces = append(plan.interfaces, tapInterface(n, tap, transitional, multiQueue, vcpus))
		default:
			args, serrs := slirpInterface(n, vmi, transitional, multiQueue, diskBoot)
			errs = append(errs, serrs...)
			plan.qemuArgs = append(plan.qemuArgs, args...)
		}
	}
	return plan, errs
}

// checkInterface refuses what the converter cannot wire: networks other
// than the pod network, bindings other than masquerade, bad models, MACs,
// ports and states.
func checkInterface(iface *kubevirtv1.Interface, networks map[string]*kubevirtv1.Network, p *field.Path) (nic, field.ErrorList) {
	var errs field.ErrorList
	n := nic{iface: iface, path: p}
	network, ok := networks[iface.Name]
	switch {
	case !ok:
		errs = append(errs, field.NotFound(p.Child("name"), iface.Name))
	case network.Multus != nil:
		errs = append(errs, field.Forbidden(p.Child("name"), "interface "+iface.Name+": Multus networks are not supported"))
	case network.Pod == nil:
		errs = append(errs, field.Invalid(p.Child("name"), iface.Name, "the network has no source; only the pod network is supported"))
	default:
		n.network = network.Pod
	}
	m := iface.InterfaceBindingMethod
	switch {
	case iface.Binding != nil:
		errs = append(errs, field.Forbidden(p.Child("binding"), "network binding plugins are not supported"))
	case m.Bridge != nil || m.DeprecatedSlirp != nil || m.SRIOV != nil || m.DeprecatedMacvtap != nil || m.DeprecatedPasst != nil:
		errs = append(errs, field.NotSupported(p, bindingName(m), []string{"masquerade"}))
	}
	n.model = iface.Model
	if n.model == "" {
		n.model = "virtio"
	}
	if _, ok := nicModels[n.model]; !ok {
		errs = append(errs, field.NotSupported(p.Child("model"), iface.Model, []string{"e1000", "e1000e", "igb", "ne2k_pci", "pcnet", "rtl8139", "virtio"}))
	}
	if iface.MacAddress != "" {
		if mac, err := net.ParseMAC(iface.MacAddress); err != nil || len(mac) != 6 {
			errs = append(errs, field.Invalid(p.Child("macAddress"), iface.MacAddress, "must be a 48-bit MAC address"))
		}
	}
	switch iface.State {
	case "", kubevirtv1.InterfaceStateLinkUp, kubevirtv1.InterfaceStateLinkDown:
	default:
		errs = append(errs, field.NotSupported(p.Child("state"), iface.State, []string{"up", "down"}))
	}
	for j, port := range iface.Ports {
		pp := p.Child("ports").Index(j)
		if port.Port < 1 || port.Port > 65535 {
			errs = append(errs, field.Invalid(pp.Child("port"), port.Port, "must be 1 to 65535"))
		}
		if proto := strings.ToUpper(port.Protocol); proto != "" && proto != "TCP" && proto != "UDP" {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), port.Protocol, []string{"TCP", "UDP"}))
		}
	}
	if iface.ACPIIndex < 0 {
		errs = append(errs, field.Invalid(p.Child("acpiIndex"), iface.ACPIIndex, "must not be negative"))
	}
	boot, err := bootOrder(iface.BootOrder, p.Child("bootOrder"))
	if err != nil {
		errs = append(errs, err)
	}
	n.boot = boot
	if iface.PciAddress != "" {
		addr, ok := pciAddress(iface.PciAddress)
		if !ok {
			errs = append(errs, field.Invalid(p.Child("pciAddress"), iface.PciAddress, "must be a PCI address like 0000:81:01.0"))
		}
		n.address = addr
	}
	return n, errs
}

// bindingName names the binding method that is set, for error messages.
func bindingName(m kubevirtv1.InterfaceBindingMethod) string {
	switch {
	case m.Bridge != nil:
		return "bridge"
	case m.DeprecatedSlirp != nil:
		return "slirp"
	case m.SRIOV != nil:
		return "sriov"
	case m.DeprecatedMacvtap != nil:
		return "macvtap"
	case m.DeprecatedPasst != nil:
		return "passt"
	}
	return "masquerade"
}

// tapInterface attaches the guest to the tap device the node agent made in
// the pod's network namespace; libvirt must leave the device alone. The
// option ROM (PXE) is left out unless the interface is in the boot order.
func tapInterface(n nic, tap string, transitional, multiQueue bool, vcpus uint32) Interface {
	out := Interface{
		Type:    "ethernet",
		Target:  &InterfaceTarget{Dev: tap, Managed: "no"},
		Model:   &InterfaceModel{Type: n.model},
		Boot:    n.boot,
		Alias:   &Alias{Name: "ua-" + n.iface.Name},
		Address: n.address,
	}
	if n.iface.MacAddress != "" {
		out.MAC = &MAC{Address: strings.ToLower(n.iface.MacAddress)}
	}
	if n.model == "virtio" {
		if transitional {
			out.Model.Type = "virtio-transitional"
		}
		if multiQueue && vcpus > 1 {
			out.Driver = &InterfaceDriver{Queues: vcpus}
		}
	}
	if n.iface.State == kubevirtv1.InterfaceStateLinkDown {
		out.Link = &InterfaceLink{State: "down"}
	}
	if n.boot == nil {
		out.ROM = &InterfaceROM{Enabled: "no"}
	}
	if n.iface.ACPIIndex > 0 {
		out.ACPI = &InterfaceACPI{Index: uint32(n.iface.ACPIIndex)}
	}
	return out
}

// slirpInterface is the unprivileged implementation of masquerade: QEMU's
// user-mode stack on the VM network CIDR (gateway .1, guest .2 by DHCP,
// DNS .3 forwarding to the pod's resolver), with a host forward from the
// pod's address to the guest for each declared port. An interface that
// declares no ports can reach out but receives no inbound connections.
// libvirt 9.0 cannot add port forwards to <interface type='user'>, so the
// netdev and the NIC are passed to QEMU directly.
//
// libvirt does not see that NIC, so when no disk has a boot order either it
// boots the first disk with boot index 1 (its implicit <boot dev='hd'/>),
// which would clash with the NIC's index; a NIC boot order therefore needs
// boot orders on the disks too.
func slirpInterface(n nic, vmi *kubevirtv1.VirtualMachineInstance, transitional, multiQueue, diskBoot bool) ([]string, field.ErrorList) {
	var errs field.ErrorList
	p := n.path
	if n.boot != nil && !diskBoot && len(vmi.Spec.Domain.Devices.Disks) > 0 {
		errs = append(errs, field.Invalid(p.Child("bootOrder"), n.boot.Order,
			"with the slirp masquerade implementation an interface boot order needs boot orders on the disks too"))
	}
	if n.address != nil {
		errs = append(errs, field.Forbidden(p.Child("pciAddress"), "a PCI address is not supported with the slirp masquerade implementation"))
	}
	if n.iface.State == kubevirtv1.InterfaceStateLinkDown {
		errs = append(errs, field.Forbidden(p.Child("state"), "link state down is not supported with the slirp masquerade implementation"))
	}
	if multiQueue && n.model == "virtio" {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "domain", "devices", "networkInterfaceMultiqueue"),
			"multi-queue interfaces are not supported with the slirp masquerade implementation"))
	}
	if o := n.iface.DHCPOptions; o != nil && (len(o.NTPServers) > 0 || len(o.PrivateOptions) > 0) {
		errs = append(errs, field.Forbidden(p.Child("dhcpOptions"), "NTP servers and private DHCP options are not supported with the slirp masquerade implementation"))
	}
	cidr := DefaultVMNetworkCIDR
	if n.network != nil && n.network.VMNetworkCIDR != "" {
		cidr = n.network.VMNetworkCIDR
	}
	gateway, guest, err := masqueradeAddresses(cidr)
	if err != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "networks").Key(n.iface.Name).Child("pod", "vmNetworkCIDR"), cidr, err.Error()))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	id := "nv-net-" + n.iface.Name
	hostname := vmi.Spec.Hostname
	if hostname == "" {
		hostname = vmi.Name
	}
	netdev := []string{"user", "id=" + id, "net=" + cidr, "host=" + gateway.String(), "dhcpstart=" + guest.String(), "hostname=" + qemuEscape(hostname)}
	if o := n.iface.DHCPOptions; o != nil {
		if o.BootFileName != "" {
			netdev = append(netdev, "bootfile="+qemuEscape(o.BootFileName))
		}
		if o.TFTPServerName != "" {
			netdev = append(netdev, "tftp-server-name="+qemuEscape(o.TFTPServerName))
		}
	}
	for _, port := range n.iface.Ports {
		proto := strings.ToLower(port.Protocol)
		if proto == "" {
			proto = "tcp"
		}
		netdev = append(netdev, fmt.Sprintf("hostfwd=%s::%d-%s:%d", proto, port.Port, guest, port.Port))
	}
	model := nicModels[n.model]
	if n.model == "virtio" && transitional {
		model = "virtio-net-pci-transitional"
	}
	device := qemuNIC{Driver: model, Netdev: id, ID: id, MAC: strings.ToLower(n.iface.MacAddress)}
	if n.boot != nil {
		device.BootIndex = &n.boot.Order
	} else {
		noROM := ""
		device.ROMFile = &noROM
	}
	if n.iface.ACPIIndex > 0 {
		index := uint32(n.iface.ACPIIndex)
		device.ACPIIndex = &index
	}
	deviceJSON, err := json.Marshal(device)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(p, err)}
	}
	return []string{"-netdev", strings.Join(netdev, ","), "-device", string(deviceJSON)}, nil
}

// qemuNIC is a QEMU -device option in JSON. JSON matters: QEMU creates
// devices given in the legacy key=value syntax before those given as JSON
// (as libvirt gives its own), so a legacy NIC would grab the PCI slot
// libvirt has reserved for another device.
type qemuNIC struct {
	Driver    string  `json:"driver"`
	Netdev    string  `json:"netdev"`
	ID        string  `json:"id"`
	MAC       string  `json:"mac,omitempty"`
	ROMFile   *string `json:"romfile,omitempty"`
	BootIndex *uint32 `json:"bootindex,omitempty"`
	ACPIIndex *uint32 `json:"acpi-index,omitempty"`
}

// masqueradeAddresses gives the gateway (first) and guest (second) address
// of an IPv4 VM network.
func masqueradeAddresses(cidr string) (gateway, guest net.IP, err error) {
	_, ipnet, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, nil, fmt.Errorf("must be an IPv4 CIDR: %v", err)
	}
	base := ipnet.IP.To4()
	ones, bits := ipnet.Mask.Size()
	if base == nil || bits != 32 {
		return nil, nil, fmt.Errorf("must be an IPv4 CIDR")
	}
	if ones > 29 {
		return nil, nil, fmt.Errorf("the VM network needs a prefix of at most /29 (gateway, guest, DNS)")
	}
	gateway = net.IPv4(base[0], base[1], base[2], base[3]+1).To4()
	guest = net.IPv4(base[0], base[1], base[2], base[3]+2).To4()
	return gateway, guest, nil
}

// qemuEscape doubles commas, QEMU's option separator.
func qemuEscape(s string) string {
	return strings.ReplaceAll(s, ",", ",,")
}
