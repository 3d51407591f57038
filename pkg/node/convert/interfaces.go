package convert

import (
	"crypto/sha256"
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

// generatedMACPrefix starts the MAC of an interface that names none: QEMU's
// locally administered range, as libvirt uses for the MACs it generates.
var generatedMACPrefix = []byte{0x52, 0x54, 0x00}

// nicModels are the interface models KubeVirt accepts; libvirt takes the
// names as they are.
var nicModels = map[string]bool{
	"virtio": true, "e1000": true, "e1000e": true, "igb": true, "ne2k_pci": true, "pcnet": true, "rtl8139": true,
}

// PodInterface is one guest interface on the pod network with the masquerade
// binding, as the node agent wires it inside the launcher pod: a tap device
// that QEMU opens, on a bridge holding the gateway address, NAT between the
// pod's address and the guest's, and DHCP handing the guest its address.
// Convert attaches the guest to the same tap with the same MAC and queues.
type PodInterface struct {
	// Name is the interface's name in the spec.
	Name string
	// Tap is the tap device in the pod's network namespace.
	Tap string
	// MAC is the guest's MAC address (the spec's, else a stable generated one).
	MAC string
	// Queues is the number of queue pairs QEMU opens on the tap (1: a
	// single-queue tap; more: a multi-queue tap).
	Queues uint32
	// Gateway is the bridge's address: the guest's router, DHCP server and
	// the source of connections from the pod's own loopback.
	Gateway net.IP
	// Guest is the address DHCP gives the guest.
	Guest net.IP
	// PrefixLength is the VM network's prefix length.
	PrefixLength int
	// Ports are the declared ports; none means every port of the pod's
	// address reaches the guest.
	Ports []kubevirtv1.Port
	// DHCPOptions are the extra DHCP options of the interface, if any.
	DHCPOptions *kubevirtv1.DHCPOptions
}

// nic is one checked interface with everything the converter needs: pod is set for every
// interface (its tap, MAC and queues); bridge only for one with the bridge binding on a
// secondary Multus network.
type nic struct {
	iface   *kubevirtv1.Interface
	model   string
	boot    *Boot
	address *Address
	pod     PodInterface
	bridge  *BridgeInterface
}

// PodInterfaces lists the instance's interfaces on the pod network, with the
// devices and addresses the node agent prepares for them. It fails, naming
// the fields, for interfaces Convert refuses too.
func PodInterfaces(vmi *kubevirtv1.VirtualMachineInstance) ([]PodInterface, error) {
	nics, err := instanceNICs(vmi, "pod")
	if err != nil {
		return nil, err
	}
	out := make([]PodInterface, 0, len(nics))
	for _, n := range nics {
		if n.bridge == nil {
			out = append(out, n.pod)
		}
	}
	return out, nil
}

// convertInterfaces attaches the guest's interfaces to the tap devices the
// node agent prepares in the launcher pod (see PodInterface).
func convertInterfaces(vmi *kubevirtv1.VirtualMachineInstance, vcpus uint32) ([]Interface, field.ErrorList) {
	nics, errs := checkInterfaces(vmi, vcpus)
	transitional := vmi.Spec.Domain.Devices.UseVirtioTransitional != nil && *vmi.Spec.Domain.Devices.UseVirtioTransitional
	var out []Interface
	for _, n := range nics {
		out = append(out, tapInterface(n, transitional))
	}
	return out, errs
}

// checkInterfaces checks every interface and computes its pod-side plan.
// instanceNICs checks the instance's interfaces as Convert does (what is the "pod" or "bridge"
// caller asking) and returns them.
func instanceNICs(vmi *kubevirtv1.VirtualMachineInstance, what string) ([]nic, error) {
	if vmi == nil {
		return nil, fmt.Errorf("%s interfaces: nil VirtualMachineInstance", what)
	}
	t, errs := cpuTopology(&vmi.Spec.Domain, fieldPathDomain)
	vcpus := uint32(1)
	if len(errs) == 0 {
		vcpus = t.vcpus()
	}
	nics, nerrs := checkInterfaces(vmi, vcpus)
	errs = append(errs, nerrs...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("interfaces of VirtualMachineInstance %s/%s: %w", vmi.Namespace, vmi.Name, errs.ToAggregate())
	}
	return nics, nil
}

func checkInterfaces(vmi *kubevirtv1.VirtualMachineInstance, vcpus uint32) ([]nic, field.ErrorList) {
	spec := &vmi.Spec
	p := field.NewPath("spec", "domain", "devices", "interfaces")
	networks := make(map[string]*kubevirtv1.Network, len(spec.Networks))
	for i := range spec.Networks {
		networks[spec.Networks[i].Name] = &spec.Networks[i]
	}
	devices := &spec.Domain.Devices
	multiQueue := devices.NetworkInterfaceMultiQueue != nil && *devices.NetworkInterfaceMultiQueue
	var (
		nics []nic
		errs field.ErrorList
	)
	for i := range devices.Interfaces {
		n, nerrs := checkInterface(vmi, &devices.Interfaces[i], networks, p.Index(i))
		if len(nerrs) > 0 {
			errs = append(errs, nerrs...)
			continue
		}
		n.pod.Tap = TapName(i)
		n.pod.Queues = 1
		if multiQueue && n.model == "virtio" && vcpus > 1 {
			n.pod.Queues = vcpus
		}
		if n.bridge != nil {
			n.bridge.Tap, n.bridge.Queues = n.pod.Tap, n.pod.Queues
		}
		nics = append(nics, n)
	}
	return nics, errs
}

// checkInterface refuses what the converter cannot wire: networks other
// than the pod network, bindings other than masquerade, bad models, MACs,
// ports, states and VM network CIDRs.
func checkInterface(vmi *kubevirtv1.VirtualMachineInstance, iface *kubevirtv1.Interface, networks map[string]*kubevirtv1.Network, p *field.Path) (nic, field.ErrorList) {
	n := nic{iface: iface, pod: PodInterface{Name: iface.Name, Ports: iface.Ports, DHCPOptions: iface.DHCPOptions}}
	pod, bridge, errs := interfaceNetwork(iface, networks, p)
	n.model = iface.Model
	if n.model == "" {
		n.model = "virtio"
	}
	if !nicModels[n.model] {
		errs = append(errs, field.NotSupported(p.Child("model"), iface.Model, []string{"e1000", "e1000e", "igb", "ne2k_pci", "pcnet", "rtl8139", "virtio"}))
	}
	if iface.MacAddress != "" {
		if mac, err := net.ParseMAC(iface.MacAddress); err != nil || len(mac) != 6 {
			errs = append(errs, field.Invalid(p.Child("macAddress"), iface.MacAddress, "must be a 48-bit MAC address"))
		}
	}
	n.pod.MAC = InterfaceMAC(vmi, iface)
	if bridge != nil {
		bridge.MAC, bridge.DHCPOptions = n.pod.MAC, iface.DHCPOptions
		n.bridge = bridge
	}
	switch iface.State {
	case "", kubevirtv1.InterfaceStateLinkUp, kubevirtv1.InterfaceStateLinkDown:
	default:
		errs = append(errs, field.NotSupported(p.Child("state"), iface.State, []string{"up", "down"}))
	}
	errs = append(errs, checkPortsAndDHCP(iface, p)...)
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
	if pod != nil {
		errs = append(errs, n.pod.setAddresses(iface.Name, pod)...)
	}
	return n, errs
}

// interfaceNetwork finds the network an interface is on: the pod network (or a default Multus
// network, which takes its place) with the masquerade binding, or a secondary Multus network with
// the bridge binding; other networks and bindings are refused.
func interfaceNetwork(iface *kubevirtv1.Interface, networks map[string]*kubevirtv1.Network, p *field.Path) (*kubevirtv1.PodNetwork, *BridgeInterface, field.ErrorList) {
	var errs field.ErrorList
	network, ok := networks[iface.Name]
	var (
		pod    *kubevirtv1.PodNetwork
		bridge *BridgeInterface
	)
	m := iface.InterfaceBindingMethod
	switch {
	case !ok:
		errs = append(errs, field.NotFound(p.Child("name"), iface.Name))
	case network.Multus != nil && network.Multus.Default:
		pod = &kubevirtv1.PodNetwork{}
	case network.Multus != nil:
		if m.Bridge == nil || iface.Binding != nil {
			errs = append(errs, field.NotSupported(p, bindingName(m), []string{"bridge"}))
		}
		bridge = newBridgeInterface(iface.Name)
	case network.Pod == nil:
		errs = append(errs, field.Invalid(p.Child("name"), iface.Name, "the network has no source"))
	default:
		pod = network.Pod
	}
	switch {
	case iface.Binding != nil:
		errs = append(errs, field.Forbidden(p.Child("binding"), "network binding plugins are not supported"))
	case pod != nil && (m.Bridge != nil || m.DeprecatedSlirp != nil || m.SRIOV != nil || m.DeprecatedMacvtap != nil || m.DeprecatedPasst != nil):
		errs = append(errs, field.NotSupported(p, bindingName(m), []string{"masquerade"}))
	}
	return pod, bridge, errs
}

// checkPortsAndDHCP checks the ports an interface forwards and its DHCP options.
func checkPortsAndDHCP(iface *kubevirtv1.Interface, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for j, port := range iface.Ports {
		pp := p.Child("ports").Index(j)
		if port.Port < 1 || port.Port > 65535 {
			errs = append(errs, field.Invalid(pp.Child("port"), port.Port, "must be 1 to 65535"))
		}
		if proto := strings.ToUpper(port.Protocol); proto != "" && proto != "TCP" && proto != "UDP" {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), port.Protocol, []string{"TCP", "UDP"}))
		}
	}
	if o := iface.DHCPOptions; o != nil {
		for j, opt := range o.PrivateOptions {
			if opt.Option < 224 || opt.Option > 254 {
				errs = append(errs, field.Invalid(p.Child("dhcpOptions", "privateOptions").Index(j).Child("option"), opt.Option, "must be 224 to 254"))
			}
		}
		for j, s := range o.NTPServers {
			if ip := net.ParseIP(s); ip == nil || ip.To4() == nil {
				errs = append(errs, field.Invalid(p.Child("dhcpOptions", "ntpServers").Index(j), s, "must be an IPv4 address"))
			}
		}
	}
	return errs
}

// setAddresses sets the masquerade gateway, guest address and prefix of the pod network's
// VM network CIDR (DefaultVMNetworkCIDR when it names none).
func (pi *PodInterface) setAddresses(name string, pod *kubevirtv1.PodNetwork) field.ErrorList {
	cidr := DefaultVMNetworkCIDR
	if pod.VMNetworkCIDR != "" {
		cidr = pod.VMNetworkCIDR
	}
	gateway, guest, prefix, err := masqueradeAddresses(cidr)
	pi.Gateway, pi.Guest, pi.PrefixLength = gateway, guest, prefix
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "networks").Key(name).Child("pod", "vmNetworkCIDR"), cidr, err.Error())}
	}
	return nil
}

// InterfaceMAC is the guest MAC of an interface: the one the spec names
// (lower case), else one derived from the instance's namespace and name and
// the interface's name, so that it stays the same across restarts of the VM.
// Each guest sits alone on its pod's bridge, so the 24 derived bits need not
// be unique beyond the instance.
func InterfaceMAC(vmi *kubevirtv1.VirtualMachineInstance, iface *kubevirtv1.Interface) string {
	if iface.MacAddress != "" {
		return strings.ToLower(iface.MacAddress)
	}
	sum := sha256.Sum256([]byte(vmi.Namespace + "/" + vmi.Name + "/" + iface.Name))
	mac := append(append(net.HardwareAddr{}, generatedMACPrefix...), sum[:3]...)
	return mac.String()
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
func tapInterface(n nic, transitional bool) Interface {
	out := Interface{
		Type:    "ethernet",
		MAC:     &MAC{Address: n.pod.MAC},
		Target:  &InterfaceTarget{Dev: n.pod.Tap, Managed: "no"},
		Model:   &InterfaceModel{Type: n.model},
		Boot:    n.boot,
		Alias:   &Alias{Name: "ua-" + n.iface.Name},
		Address: n.address,
	}
	if n.model == "virtio" && transitional {
		out.Model.Type = "virtio-transitional"
	}
	if n.pod.Queues > 1 {
		out.Driver = &InterfaceDriver{Queues: n.pod.Queues}
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

// masqueradeAddresses gives the gateway (first) and guest (second) address
// of an IPv4 VM network, and its prefix length.
func masqueradeAddresses(cidr string) (gateway, guest net.IP, prefix int, err error) {
	_, ipnet, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("must be an IPv4 CIDR: %v", err)
	}
	base := ipnet.IP.To4()
	ones, bits := ipnet.Mask.Size()
	if base == nil || bits != 32 {
		return nil, nil, 0, fmt.Errorf("must be an IPv4 CIDR")
	}
	if ones > 30 {
		return nil, nil, 0, fmt.Errorf("the VM network needs a prefix of at most /30 (gateway and guest)")
	}
	gateway = net.IPv4(base[0], base[1], base[2], base[3]+1).To4()
	guest = net.IPv4(base[0], base[1], base[2], base[3]+2).To4()
	return gateway, guest, ones, nil
}
