package validation

import (
	"fmt"
	"net"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

var (
	// interfaceModels are the NIC models KubeVirt accepts.
	interfaceModels = []string{"e1000", "e1000e", "igb", "ne2k_pci", "pcnet", "rtl8139", "virtio"}
	// supportedBindings are the bindings NativeVirt implements.
	supportedBindings = []string{"bridge", "masquerade"}
	portProtocols     = []string{"TCP", "UDP"}
	interfaceStates   = []kubevirtv1.InterfaceState{kubevirtv1.InterfaceStateLinkUp, kubevirtv1.InterfaceStateLinkDown}
)

// validateNetworking checks networks and interfaces and that they pair up by name: every
// interface attaches to the network of its name and every network is used by an interface.
func validateNetworking(spec *kubevirtv1.VirtualMachineInstanceSpec, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	networksPath := specPath.Child("networks")
	interfacesPath := specPath.Child("domain", "devices", "interfaces")

	networks := nameSet{}
	podNetwork := -1
	multusDefault := -1
	for i := range spec.Networks {
		n := &spec.Networks[i]
		netPath := networksPath.Index(i)
		if n.Name == "" {
			errs = append(errs, field.Required(netPath.Child("name"), ""))
		}
		errs = appendErr(errs, networks.add(n.Name, netPath.Child("name")))
		errs = append(errs, validateNetworkSource(&n.NetworkSource, netPath)...)
		errs = append(errs, check(unsupportedNetworkFields, n, netPath)...)
		if n.Pod != nil {
			if podNetwork >= 0 {
				errs = append(errs, field.Invalid(netPath.Child("pod"), n.Name,
					fmt.Sprintf("only one network may be the pod network; %s already is", networksPath.Index(podNetwork))))
			} else {
				podNetwork = i
			}
		}
		if n.Multus != nil && n.Multus.Default {
			if multusDefault >= 0 {
				errs = append(errs, field.Invalid(netPath.Child("multus", "default"), true, "Multus CNI should only have one default network"))
			} else {
				multusDefault = i
			}
		}
	}
	if podNetwork >= 0 && multusDefault >= 0 {
		errs = append(errs, field.Invalid(networksPath.Index(podNetwork).Child("pod"), spec.Networks[podNetwork].Name,
			"Pod network cannot be defined when Multus default network is defined"))
	}

	interfaces := nameSet{}
	for i := range spec.Domain.Devices.Interfaces {
		in := &spec.Domain.Devices.Interfaces[i]
		ifPath := interfacesPath.Index(i)
		namePath := ifPath.Child("name")
		if in.Name == "" {
			errs = append(errs, field.Required(namePath, ""))
		} else if !networks.has(in.Name) {
			errs = append(errs, field.Invalid(namePath, in.Name, fmt.Sprintf("interface %s has no matching network", in.Name)))
		}
		errs = appendErr(errs, interfaces.add(in.Name, namePath))
		errs = append(errs, validateInterface(in, ifPath)...)
		errs = append(errs, validateBindingOnNetwork(in, networkNamed(spec.Networks, in.Name), ifPath)...)
	}

	for i := range spec.Networks {
		if name := spec.Networks[i].Name; name != "" && !interfaces.has(name) {
			errs = append(errs, field.Invalid(networksPath.Index(i).Child("name"), name,
				fmt.Sprintf("network %s has no matching interface", name)))
		}
	}
	return errs
}

// validateNetworkSource requires exactly one source and valid masquerade subnets.
func validateNetworkSource(src *kubevirtv1.NetworkSource, netPath *field.Path) field.ErrorList {
	switch {
	case src.Pod == nil && src.Multus == nil:
		return field.ErrorList{field.Required(netPath, "exactly one of pod and multus must be set")}
	case src.Pod != nil && src.Multus != nil:
		return field.ErrorList{field.Invalid(netPath, []string{"pod", "multus"}, "exactly one of pod and multus must be set")}
	case src.Multus != nil:
		return validateMultusNetwork(src.Multus, netPath.Child("multus"))
	}
	var errs field.ErrorList
	if cidr := src.Pod.VMNetworkCIDR; cidr != "" {
		ip, ipnet, err := net.ParseCIDR(cidr)
		switch {
		case err != nil || ip.To4() == nil:
			errs = append(errs, field.Invalid(netPath.Child("pod", "vmNetworkCIDR"), cidr, "must be an IPv4 CIDR such as 10.0.2.0/24"))
		default:
			// The gateway takes the first address, the guest the second.
			if ones, _ := ipnet.Mask.Size(); ones > 30 {
				errs = append(errs, field.Invalid(netPath.Child("pod", "vmNetworkCIDR"), cidr,
					"must leave room for the gateway and the guest (a prefix of at most /30)"))
			}
		}
	}
	if cidr := src.Pod.VMIPv6NetworkCIDR; cidr != "" {
		if ip, _, err := net.ParseCIDR(cidr); err != nil || ip.To4() != nil {
			errs = append(errs, field.Invalid(netPath.Child("pod", "vmIPv6NetworkCIDR"), cidr, "must be an IPv6 CIDR such as fd10:0:2::/120"))
		}
	}
	return errs
}

// validateInterface checks one interface's binding, model, ports, addresses and options.
func validateInterface(in *kubevirtv1.Interface, ifPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateBinding(in, ifPath)...)
	errs = append(errs, check(unsupportedInterfaceFields, in, ifPath)...)
	errs = append(errs, ValidateInterfaceModel(in.Model, ifPath.Child("model"))...)
	portNames := nameSet{}
	for j, p := range in.Ports {
		portPath := ifPath.Child("ports").Index(j)
		// Named ports of the pod network interface become the launcher container's ports.
		if p.Name != "" {
			for _, msg := range utilvalidation.IsValidPortName(p.Name) {
				errs = append(errs, field.Invalid(portPath.Child("name"), p.Name, msg))
			}
			errs = appendErr(errs, portNames.add(p.Name, portPath.Child("name")))
		}
		if p.Port < 1 || p.Port > 65535 {
			errs = append(errs, field.Invalid(portPath.Child("port"), p.Port, "must be between 1 and 65535, inclusive"))
		}
		if p.Protocol != "" && !contains(portProtocols, p.Protocol) {
			errs = append(errs, field.NotSupported(portPath.Child("protocol"), p.Protocol, portProtocols))
		}
	}
	if mac := in.MacAddress; mac != "" {
		if hw, err := net.ParseMAC(mac); err != nil || len(hw) != 6 {
			errs = append(errs, field.Invalid(ifPath.Child("macAddress"), mac, "must be a MAC address such as de:ad:00:00:be:af"))
		}
	}
	if a := in.PciAddress; a != "" && !pciAddressPattern.MatchString(a) {
		errs = append(errs, field.Invalid(ifPath.Child("pciAddress"), a, "must be a PCI address such as 0000:81:01.0"))
	}
	if in.ACPIIndex < 0 {
		errs = append(errs, field.Invalid(ifPath.Child("acpiIndex"), in.ACPIIndex, "must be greater than or equal to 0"))
	}
	if in.State != "" && !contains(interfaceStates, in.State) {
		errs = append(errs, field.NotSupported(ifPath.Child("state"), string(in.State), interfaceStates))
	}
	if in.DHCPOptions != nil {
		for j, opt := range in.DHCPOptions.PrivateOptions {
			if opt.Option < 224 || opt.Option > 254 {
				errs = append(errs, field.Invalid(ifPath.Child("dhcpOptions", "privateOptions").Index(j).Child("option"),
					opt.Option, "must be between 224 and 254, inclusive"))
			}
		}
		for j, ntp := range in.DHCPOptions.NTPServers {
			if ip := net.ParseIP(ntp); ip == nil || ip.To4() == nil {
				errs = append(errs, field.Invalid(ifPath.Child("dhcpOptions", "ntpServers").Index(j), ntp, "must be an IPv4 address"))
			}
		}
	}
	return errs
}

// validateBinding allows at most one binding and refuses every binding but masquerade and bridge. An
// interface without a binding gets masquerade from the defaults. SR-IOV is refused by the
// unsupported table instead, as a feature NativeVirt may gain.
func validateBinding(in *kubevirtv1.Interface, ifPath *field.Path) field.ErrorList {
	m := &in.InterfaceBindingMethod
	bindings := []struct {
		name string
		set  bool
	}{
		{"bridge", m.Bridge != nil},
		{"slirp", m.DeprecatedSlirp != nil},
		{"masquerade", m.Masquerade != nil},
		{"sriov", m.SRIOV != nil},
		{"macvtap", m.DeprecatedMacvtap != nil},
		{"passt", m.DeprecatedPasst != nil},
		{"binding", in.Binding != nil},
	}
	var set []string
	for _, b := range bindings {
		if b.set {
			set = append(set, b.name)
		}
	}
	if len(set) > 1 {
		return field.ErrorList{field.Invalid(ifPath, set, "at most one binding method may be set")}
	}
	if len(set) == 0 {
		return nil
	}
	switch name := set[0]; name {
	case "masquerade", "bridge", "sriov":
		return nil
	case "binding":
		return field.ErrorList{field.NotSupported(ifPath.Child("binding", "name"), in.Binding.Name, supportedBindings)}
	default:
		return field.ErrorList{field.NotSupported(ifPath.Child(name), name, supportedBindings)}
	}
}
