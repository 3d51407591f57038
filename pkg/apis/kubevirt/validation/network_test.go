package validation

import (
	"testing"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// iface0 mutates interfaces[0].
func iface0(mutate func(i *kubevirtv1.Interface)) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
	return func(s *kubevirtv1.VirtualMachineInstanceSpec) { mutate(&s.Domain.Devices.Interfaces[0]) }
}

// binding0 replaces the binding of interfaces[0].
func binding0(m kubevirtv1.InterfaceBindingMethod) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
	return iface0(func(i *kubevirtv1.Interface) { i.InterfaceBindingMethod = m })
}

func TestValidateNetworksAndInterfaces(t *testing.T) {
	pod := kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}
	masquerade := kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}}
	runSpecCases(t, []specCase{
		{"no networking at all", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks, s.Domain.Devices.Interfaces = nil, nil
		}, nil},
		{"duplicate network", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks = append(s.Networks, s.Networks[0])
		}, []string{"Duplicate:spec.networks[1].name", "Invalid:spec.networks[1].pod"}},
		{"second pod network", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks = append(s.Networks, kubevirtv1.Network{Name: "second", NetworkSource: pod})
			s.Domain.Devices.Interfaces = append(s.Domain.Devices.Interfaces,
				kubevirtv1.Interface{Name: "second", InterfaceBindingMethod: masquerade})
		}, []string{"Invalid:spec.networks[1].pod"}},
		{"network without source", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks[0].NetworkSource = kubevirtv1.NetworkSource{}
		}, []string{"Required:spec.networks[0]"}},
		{"pod and multus", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks[0].Multus = &kubevirtv1.MultusNetwork{NetworkName: "ns/net"}
		}, []string{"Invalid:spec.networks[0]"}},
		{"network without name", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks[0].Name = ""
		}, []string{"Required:spec.networks[0].name", "Invalid:spec.domain.devices.interfaces[0].name"}},
		{"interface without network", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Interfaces = append(s.Domain.Devices.Interfaces,
				kubevirtv1.Interface{Name: "extra", InterfaceBindingMethod: masquerade})
		}, []string{"Invalid:spec.domain.devices.interfaces[1].name"}},
		{"network without interface", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Interfaces = nil
		}, []string{"Invalid:spec.networks[0].name"}},
		{"interface without name", iface0(func(i *kubevirtv1.Interface) { i.Name = "" }),
			[]string{"Required:spec.domain.devices.interfaces[0].name", "Invalid:spec.networks[0].name"}},
		{"duplicate interface", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Interfaces = append(s.Domain.Devices.Interfaces, s.Domain.Devices.Interfaces[0])
		}, []string{"Duplicate:spec.domain.devices.interfaces[1].name"}},
		{"masquerade subnets", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks[0].Pod = &kubevirtv1.PodNetwork{VMNetworkCIDR: "10.10.0.0/24", VMIPv6NetworkCIDR: "fd10:0:2::/120"}
		}, nil},
		{"bad masquerade subnets", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks[0].Pod = &kubevirtv1.PodNetwork{VMNetworkCIDR: "fd10::/64", VMIPv6NetworkCIDR: "10.0.0.0/8"}
		}, []string{"Invalid:spec.networks[0].pod.vmNetworkCIDR", "Invalid:spec.networks[0].pod.vmIPv6NetworkCIDR"}},
		{"garbage subnet", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks[0].Pod = &kubevirtv1.PodNetwork{VMNetworkCIDR: "10.0.2.0"}
		}, []string{"Invalid:spec.networks[0].pod.vmNetworkCIDR"}},
		{"subnet without room for the gateway and the guest", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks[0].Pod = &kubevirtv1.PodNetwork{VMNetworkCIDR: "10.0.2.0/31"}
		}, []string{"Invalid:spec.networks[0].pod.vmNetworkCIDR"}},
	})
}

func TestValidateBinding(t *testing.T) {
	runSpecCases(t, []specCase{
		{"masquerade", binding0(kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}}), nil},
		{"no binding (defaulted to masquerade)", binding0(kubevirtv1.InterfaceBindingMethod{}), nil},
		{"bridge on the pod network", binding0(kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}),
			[]string{"Invalid:spec.domain.devices.interfaces[0].bridge"}},
		{"slirp", binding0(kubevirtv1.InterfaceBindingMethod{DeprecatedSlirp: &kubevirtv1.DeprecatedInterfaceSlirp{}}),
			[]string{"NotSupported:spec.domain.devices.interfaces[0].slirp"}},
		{"passt", binding0(kubevirtv1.InterfaceBindingMethod{DeprecatedPasst: &kubevirtv1.DeprecatedInterfacePasst{}}),
			[]string{"NotSupported:spec.domain.devices.interfaces[0].passt"}},
		{"macvtap", binding0(kubevirtv1.InterfaceBindingMethod{DeprecatedMacvtap: &kubevirtv1.DeprecatedInterfaceMacvtap{}}),
			[]string{"NotSupported:spec.domain.devices.interfaces[0].macvtap"}},
		{"sriov", binding0(kubevirtv1.InterfaceBindingMethod{SRIOV: &kubevirtv1.InterfaceSRIOV{}}),
			[]string{"Forbidden:spec.domain.devices.interfaces[0].sriov"}},
		{"binding plugin", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Interfaces[0].InterfaceBindingMethod = kubevirtv1.InterfaceBindingMethod{}
			s.Domain.Devices.Interfaces[0].Binding = &kubevirtv1.PluginBinding{Name: "passt"}
		}, []string{"NotSupported:spec.domain.devices.interfaces[0].binding.name"}},
		{"two bindings", binding0(kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{},
			Bridge: &kubevirtv1.InterfaceBridge{}}), []string{"Invalid:spec.domain.devices.interfaces[0]"}},
		{"masquerade and a plugin", iface0(func(i *kubevirtv1.Interface) { i.Binding = &kubevirtv1.PluginBinding{Name: "x"} }),
			[]string{"Invalid:spec.domain.devices.interfaces[0]"}},
	})
}

func TestValidateInterfaceFields(t *testing.T) {
	const in = "spec.domain.devices.interfaces[0]"
	runSpecCases(t, []specCase{
		{"every field set well", iface0(func(i *kubevirtv1.Interface) {
			i.Model = "e1000e"
			i.Ports = []kubevirtv1.Port{{Name: "http", Port: 80}, {Port: 53, Protocol: "UDP"}, {Port: 65535, Protocol: "TCP"}}
			i.MacAddress = "de:ad:00:00:be:af"
			i.PciAddress = "0000:02:01.0"
			i.ACPIIndex = 3
			i.State = kubevirtv1.InterfaceStateLinkDown
			i.DHCPOptions = &kubevirtv1.DHCPOptions{PrivateOptions: []kubevirtv1.DHCPPrivateOptions{{Option: 240, Value: "x"}}}
		}), nil},
		{"unknown model", iface0(func(i *kubevirtv1.Interface) { i.Model = "vmxnet3" }), []string{"NotSupported:" + in + ".model"}},
		{"port zero", iface0(func(i *kubevirtv1.Interface) { i.Ports = []kubevirtv1.Port{{Port: 0}} }),
			[]string{"Invalid:" + in + ".ports[0].port"}},
		{"port too high", iface0(func(i *kubevirtv1.Interface) { i.Ports = []kubevirtv1.Port{{Port: 80}, {Port: 65536}} }),
			[]string{"Invalid:" + in + ".ports[1].port"}},
		{"sctp", iface0(func(i *kubevirtv1.Interface) { i.Ports = []kubevirtv1.Port{{Port: 80, Protocol: "SCTP"}} }),
			[]string{"NotSupported:" + in + ".ports[0].protocol"}},
		{"lower-case protocol", iface0(func(i *kubevirtv1.Interface) { i.Ports = []kubevirtv1.Port{{Port: 80, Protocol: "tcp"}} }),
			[]string{"NotSupported:" + in + ".ports[0].protocol"}},
		{"bad mac", iface0(func(i *kubevirtv1.Interface) { i.MacAddress = "de:ad:be:ef" }), []string{"Invalid:" + in + ".macAddress"}},
		{"eui-64 mac", iface0(func(i *kubevirtv1.Interface) { i.MacAddress = "02:00:5e:10:00:00:00:01" }),
			[]string{"Invalid:" + in + ".macAddress"}},
		{"bad pci address", iface0(func(i *kubevirtv1.Interface) { i.PciAddress = "0000:02:01.9" }),
			[]string{"Invalid:" + in + ".pciAddress"}},
		{"negative acpi index", iface0(func(i *kubevirtv1.Interface) { i.ACPIIndex = -1 }), []string{"Invalid:" + in + ".acpiIndex"}},
		{"absent state (hot-unplug)", iface0(func(i *kubevirtv1.Interface) { i.State = kubevirtv1.InterfaceStateAbsent }),
			[]string{"NotSupported:" + in + ".state"}},
		{"dhcp private option out of range", iface0(func(i *kubevirtv1.Interface) {
			i.DHCPOptions = &kubevirtv1.DHCPOptions{PrivateOptions: []kubevirtv1.DHCPPrivateOptions{{Option: 100}}}
		}), []string{"Invalid:" + in + ".dhcpOptions.privateOptions[0].option"}},
		{"dhcp NTP server not an IPv4 address", iface0(func(i *kubevirtv1.Interface) {
			i.DHCPOptions = &kubevirtv1.DHCPOptions{NTPServers: []string{"10.0.0.1", "ntp.example.com", "fd00::1"}}
		}), []string{"Invalid:" + in + ".dhcpOptions.ntpServers[1]", "Invalid:" + in + ".dhcpOptions.ntpServers[2]"}},
	})
}

// multusSecond adds a Multus network "blue" (NetworkAttachmentDefinition networkName) with an
// interface of binding m.
func multusSecond(networkName string, m kubevirtv1.InterfaceBindingMethod) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
	return func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		s.Networks = append(s.Networks, kubevirtv1.Network{Name: "blue",
			NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: networkName}}})
		s.Domain.Devices.Interfaces = append(s.Domain.Devices.Interfaces, kubevirtv1.Interface{Name: "blue", InterfaceBindingMethod: m})
	}
}

func TestValidateMultusNetworks(t *testing.T) {
	bridge := kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}
	masquerade := kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}}
	const in1 = "spec.domain.devices.interfaces[1]"
	runSpecCases(t, []specCase{
		{"bridge on a Multus network", multusSecond("blue-net", bridge), nil},
		{"namespace/name", multusSecond("other/blue-net", bridge), nil},
		{"bridge with MAC, PCI address, model and DHCP options", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			multusSecond("blue-net", bridge)(s)
			i := &s.Domain.Devices.Interfaces[1]
			i.MacAddress, i.PciAddress, i.Model = "02:00:00:00:00:aa", "0000:02:01.0", "e1000e"
			i.DHCPOptions = &kubevirtv1.DHCPOptions{NTPServers: []string{"10.0.0.1"}}
		}, nil},
		{"no networkName", multusSecond("", bridge), []string{"Required:spec.networks[1].multus.networkName"}},
		{"bad networkName", multusSecond("a/b/c", bridge), []string{"Invalid:spec.networks[1].multus.networkName"}},
		{"upper-case networkName", multusSecond("Blue", bridge), []string{"Invalid:spec.networks[1].multus.networkName"}},
		{"masquerade on a Multus network", multusSecond("blue-net", masquerade), []string{"Invalid:" + in1 + ".masquerade"}},
		{"no binding on a Multus network", multusSecond("blue-net", kubevirtv1.InterfaceBindingMethod{}), []string{"Required:" + in1}},
		{"sriov stays refused", multusSecond("blue-net", kubevirtv1.InterfaceBindingMethod{SRIOV: &kubevirtv1.InterfaceSRIOV{}}),
			[]string{"Forbidden:" + in1 + ".sriov"}},
		{"default Multus network with masquerade", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks[0].NetworkSource = kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "main", Default: true}}
		}, nil},
		{"default Multus network beside the pod network", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			multusSecond("blue-net", masquerade)(s)
			s.Networks[1].Multus.Default = true
		}, []string{"Invalid:spec.networks[0].pod"}},
		{"two default Multus networks", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks[0].NetworkSource = kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "main", Default: true}}
			multusSecond("blue-net", bridge)(s)
			s.Networks[1].Multus.Default = true
		}, []string{"Invalid:spec.networks[1].multus.default", "Invalid:" + in1 + ".bridge"}},
	})
}
