package convert

import (
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// netVMI is an instance with one interface on the pod network.
func netVMI(iface kubevirtv1.Interface, pod *kubevirtv1.PodNetwork) *kubevirtv1.VirtualMachineInstance {
	if iface.Name == "" {
		iface.Name = "default"
	}
	if pod == nil {
		pod = &kubevirtv1.PodNetwork{}
	}
	vmi := &kubevirtv1.VirtualMachineInstance{}
	vmi.Namespace, vmi.Name = "ns1", "vm1"
	vmi.Spec.Domain.Devices.Interfaces = []kubevirtv1.Interface{iface}
	vmi.Spec.Networks = []kubevirtv1.Network{{Name: iface.Name, NetworkSource: kubevirtv1.NetworkSource{Pod: pod}}}
	return vmi
}

func TestTapInterfaces(t *testing.T) {
	masq := kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}}
	generated := InterfaceMAC(netVMI(kubevirtv1.Interface{}, nil), &kubevirtv1.Interface{Name: "default"})
	tests := []struct {
		name  string
		vmi   *kubevirtv1.VirtualMachineInstance
		vcpus uint32
		want  []Interface
	}{{
		name:  "defaults: virtio on tap0 with a generated MAC, without option ROM",
		vmi:   netVMI(kubevirtv1.Interface{InterfaceBindingMethod: masq}, nil),
		vcpus: 1,
		want: []Interface{{Type: "ethernet", MAC: &MAC{Address: generated}, Target: &InterfaceTarget{Dev: "tap0", Managed: "no"},
			Model: &InterfaceModel{Type: "virtio"}, ROM: &InterfaceROM{Enabled: "no"}, Alias: &Alias{Name: "ua-default"}}},
	}, {
		name: "binding left empty means masquerade; everything set",
		vmi: func() *kubevirtv1.VirtualMachineInstance {
			v := netVMI(kubevirtv1.Interface{Name: "net1", MacAddress: "02:AA:BB:CC:DD:EE", BootOrder: ptr(int32(3)), PciAddress: "0000:01:00.0",
				ACPIIndex: 2, State: "down"}, nil)
			v.Spec.Domain.Devices.NetworkInterfaceMultiQueue = ptr(true)
			v.Spec.Domain.Devices.UseVirtioTransitional = ptr(true)
			return v
		}(),
		vcpus: 4,
		want: []Interface{{Type: "ethernet", MAC: &MAC{Address: "02:aa:bb:cc:dd:ee"}, Target: &InterfaceTarget{Dev: "tap0", Managed: "no"},
			Model: &InterfaceModel{Type: "virtio-transitional"}, Driver: &InterfaceDriver{Queues: 4}, Link: &InterfaceLink{State: "down"},
			Boot: &Boot{Order: 3}, Alias: &Alias{Name: "ua-net1"}, ACPI: &InterfaceACPI{Index: 2},
			Address: &Address{Type: "pci", Domain: "0x0000", Bus: "0x01", Slot: "0x00", Function: "0x0"}}},
	}, {
		name: "multi-queue with one vCPU: a single queue",
		vmi: func() *kubevirtv1.VirtualMachineInstance {
			v := netVMI(kubevirtv1.Interface{MacAddress: "02:00:00:00:00:01"}, nil)
			v.Spec.Domain.Devices.NetworkInterfaceMultiQueue = ptr(true)
			return v
		}(),
		vcpus: 1,
		want: []Interface{{Type: "ethernet", MAC: &MAC{Address: "02:00:00:00:00:01"}, Target: &InterfaceTarget{Dev: "tap0", Managed: "no"},
			Model: &InterfaceModel{Type: "virtio"}, ROM: &InterfaceROM{Enabled: "no"}, Alias: &Alias{Name: "ua-default"}}},
	}, {
		name: "emulated model: no queues",
		vmi: func() *kubevirtv1.VirtualMachineInstance {
			v := netVMI(kubevirtv1.Interface{Model: "rtl8139", MacAddress: "02:00:00:00:00:02", InterfaceBindingMethod: masq}, nil)
			v.Spec.Domain.Devices.NetworkInterfaceMultiQueue = ptr(true)
			return v
		}(),
		vcpus: 4,
		want: []Interface{{Type: "ethernet", MAC: &MAC{Address: "02:00:00:00:00:02"}, Target: &InterfaceTarget{Dev: "tap0", Managed: "no"},
			Model: &InterfaceModel{Type: "rtl8139"}, ROM: &InterfaceROM{Enabled: "no"}, Alias: &Alias{Name: "ua-default"}}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := convertInterfaces(tc.vmi, tc.vcpus)
			checkErrs(t, errs, "")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodInterfaces(t *testing.T) {
	vmi := netVMI(kubevirtv1.Interface{Name: "net1", MacAddress: "02:00:00:00:00:0A",
		Ports:       []kubevirtv1.Port{{Port: 80}, {Port: 53, Protocol: "UDP"}},
		DHCPOptions: &kubevirtv1.DHCPOptions{NTPServers: []string{"10.0.0.5"}}},
		&kubevirtv1.PodNetwork{VMNetworkCIDR: "192.168.50.0/28"})
	vmi.Spec.Domain.CPU = &kubevirtv1.CPU{Sockets: 2, Cores: 2}
	vmi.Spec.Domain.Memory = &kubevirtv1.Memory{Guest: ptr(qty("64Mi"))}
	vmi.Spec.Domain.Devices.NetworkInterfaceMultiQueue = ptr(true)
	got, err := PodInterfaces(vmi)
	if err != nil {
		t.Fatal(err)
	}
	want := []PodInterface{{
		Name: "net1", Tap: "tap0", MAC: "02:00:00:00:00:0a", Queues: 4,
		Gateway: net.IPv4(192, 168, 50, 1).To4(), Guest: net.IPv4(192, 168, 50, 2).To4(), PrefixLength: 28,
		Ports:       []kubevirtv1.Port{{Port: 80}, {Port: 53, Protocol: "UDP"}},
		DHCPOptions: &kubevirtv1.DHCPOptions{NTPServers: []string{"10.0.0.5"}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// The converter attaches the guest to the same tap with the same MAC and queues.
	d, err := Convert(vmi, Context{})
	if err != nil {
		t.Fatal(err)
	}
	ifs := d.Devices.Interfaces
	if len(ifs) != 1 || ifs[0].Target.Dev != got[0].Tap || ifs[0].MAC.Address != got[0].MAC || ifs[0].Driver == nil || ifs[0].Driver.Queues != got[0].Queues {
		t.Errorf("domain interfaces %+v do not match the pod interface %+v", ifs, got[0])
	}

	defaults, err := PodInterfaces(netVMI(kubevirtv1.Interface{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(defaults) != 1 || defaults[0].Gateway.String() != "10.0.2.1" || defaults[0].Guest.String() != "10.0.2.2" ||
		defaults[0].PrefixLength != 24 || defaults[0].Queues != 1 || defaults[0].Tap != "tap0" {
		t.Errorf("default pod interface %+v, want KubeVirt's 10.0.2.1/24 gateway and 10.0.2.2 guest on tap0", defaults)
	}

	none, err := PodInterfaces(&kubevirtv1.VirtualMachineInstance{})
	if err != nil || len(none) != 0 {
		t.Errorf("instance without interfaces: %v, %v; want none", none, err)
	}
	if _, err := PodInterfaces(netVMI(kubevirtv1.Interface{Model: "vmxnet3"}, nil)); err == nil || !strings.Contains(err.Error(), "interfaces[0].model") {
		t.Errorf("bad model: %v, want an error naming interfaces[0].model", err)
	}
	if _, err := PodInterfaces(nil); err == nil {
		t.Error("nil instance: no error")
	}
}

func TestInterfaceMAC(t *testing.T) {
	vmi := netVMI(kubevirtv1.Interface{}, nil)
	iface := &kubevirtv1.Interface{Name: "default"}
	mac := InterfaceMAC(vmi, iface)
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 || !strings.HasPrefix(mac, "52:54:00:") {
		t.Fatalf("generated MAC %q (%v), want 52:54:00:xx:xx:xx", mac, err)
	}
	if again := InterfaceMAC(vmi.DeepCopy(), iface); again != mac {
		t.Errorf("MAC not stable: %q then %q", mac, again)
	}
	other := vmi.DeepCopy()
	other.UID = "another-uid"
	if got := InterfaceMAC(other, iface); got != mac {
		t.Errorf("MAC changed with the uid (a restarted VM): %q, want %q", got, mac)
	}
	for what, v := range map[string]func() (*kubevirtv1.VirtualMachineInstance, *kubevirtv1.Interface){
		"name": func() (*kubevirtv1.VirtualMachineInstance, *kubevirtv1.Interface) {
			c := vmi.DeepCopy()
			c.Name = "vm2"
			return c, iface
		},
		"namespace": func() (*kubevirtv1.VirtualMachineInstance, *kubevirtv1.Interface) {
			c := vmi.DeepCopy()
			c.Namespace = "ns2"
			return c, iface
		},
		"interface": func() (*kubevirtv1.VirtualMachineInstance, *kubevirtv1.Interface) {
			return vmi, &kubevirtv1.Interface{Name: "net2"}
		},
	} {
		if got := InterfaceMAC(v()); got == mac {
			t.Errorf("another %s gives the same MAC %q", what, got)
		}
	}
	if got := InterfaceMAC(vmi, &kubevirtv1.Interface{Name: "default", MacAddress: "DE:AD:00:00:BE:AF"}); got != "de:ad:00:00:be:af" {
		t.Errorf("spec MAC: %q, want de:ad:00:00:be:af", got)
	}
}

func TestCheckInterfaceErrors(t *testing.T) {
	tests := []struct {
		name    string
		vmi     *kubevirtv1.VirtualMachineInstance
		wantErr string
	}{
		{"bridge binding", netVMI(kubevirtv1.Interface{InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}}, nil), `"bridge": supported values: "masquerade"`},
		{"slirp binding", netVMI(kubevirtv1.Interface{InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{DeprecatedSlirp: &kubevirtv1.DeprecatedInterfaceSlirp{}}}, nil), `"slirp": supported values: "masquerade"`},
		{"SR-IOV binding", netVMI(kubevirtv1.Interface{InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{SRIOV: &kubevirtv1.InterfaceSRIOV{}}}, nil), `"sriov"`},
		{"binding plugin", netVMI(kubevirtv1.Interface{Binding: &kubevirtv1.PluginBinding{Name: "passt"}}, nil), "interfaces[0].binding"},
		{"unknown model", netVMI(kubevirtv1.Interface{Model: "vmxnet3"}, nil), "interfaces[0].model"},
		{"bad MAC", netVMI(kubevirtv1.Interface{MacAddress: "01:02:03"}, nil), "interfaces[0].macAddress"},
		{"EUI-64 MAC", netVMI(kubevirtv1.Interface{MacAddress: "02:00:00:00:00:00:00:01"}, nil), "interfaces[0].macAddress"},
		{"absent state", netVMI(kubevirtv1.Interface{State: "absent"}, nil), "interfaces[0].state"},
		{"port 0", netVMI(kubevirtv1.Interface{Ports: []kubevirtv1.Port{{Port: 0}}}, nil), "interfaces[0].ports[0].port"},
		{"SCTP port", netVMI(kubevirtv1.Interface{Ports: []kubevirtv1.Port{{Port: 1, Protocol: "SCTP"}}}, nil), "interfaces[0].ports[0].protocol"},
		{"bad PCI address", netVMI(kubevirtv1.Interface{PciAddress: "pci"}, nil), "interfaces[0].pciAddress"},
		{"negative ACPI index", netVMI(kubevirtv1.Interface{ACPIIndex: -1}, nil), "interfaces[0].acpiIndex"},
		{"private DHCP option out of range", netVMI(kubevirtv1.Interface{DHCPOptions: &kubevirtv1.DHCPOptions{
			PrivateOptions: []kubevirtv1.DHCPPrivateOptions{{Option: 12, Value: "x"}}}}, nil), "interfaces[0].dhcpOptions.privateOptions[0].option"},
		{"NTP server not IPv4", netVMI(kubevirtv1.Interface{DHCPOptions: &kubevirtv1.DHCPOptions{NTPServers: []string{"ntp.example"}}}, nil),
			"interfaces[0].dhcpOptions.ntpServers[0]"},
		{"IPv6 CIDR", netVMI(kubevirtv1.Interface{}, &kubevirtv1.PodNetwork{VMNetworkCIDR: "fd00::/64"}), "vmNetworkCIDR"},
		{"CIDR too small", netVMI(kubevirtv1.Interface{}, &kubevirtv1.PodNetwork{VMNetworkCIDR: "10.0.0.0/31"}), "at most /30"},
		{
			"no network",
			func() *kubevirtv1.VirtualMachineInstance {
				v := netVMI(kubevirtv1.Interface{}, nil)
				v.Spec.Networks = nil
				return v
			}(),
			`interfaces[0].name: Not found: "default"`,
		},
		{
			"masquerade on a Multus network",
			func() *kubevirtv1.VirtualMachineInstance {
				v := netVMI(kubevirtv1.Interface{}, nil)
				v.Spec.Networks[0].NetworkSource = kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "x"}}
				return v
			}(),
			`Unsupported value: "masquerade": supported values: "bridge"`,
		},
		{
			"bridge on the pod network",
			netVMI(kubevirtv1.Interface{InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}}, nil),
			`Unsupported value: "bridge": supported values: "masquerade"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := convertInterfaces(tc.vmi, 1)
			checkErrs(t, errs, tc.wantErr)
		})
	}
}

func TestMasqueradeAddresses(t *testing.T) {
	gw, guest, prefix, err := masqueradeAddresses("10.1.0.8/30")
	if err != nil || gw.String() != "10.1.0.9" || guest.String() != "10.1.0.10" || prefix != 30 {
		t.Errorf("/30: %v %v /%d %v; want gateway 10.1.0.9, guest 10.1.0.10", gw, guest, prefix, err)
	}
	for _, bad := range []string{"", "10.0.0.1", "10.0.0.0/31", "fd00::/120"} {
		if _, _, _, err := masqueradeAddresses(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestBridgeInterfaces(t *testing.T) {
	vmi := netVMI(kubevirtv1.Interface{}, nil)
	vmi.Spec.Networks = append(vmi.Spec.Networks, kubevirtv1.Network{Name: "blue",
		NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "blue-net"}}})
	vmi.Spec.Domain.Devices.Interfaces = append(vmi.Spec.Domain.Devices.Interfaces, kubevirtv1.Interface{Name: "blue",
		MacAddress: "02:00:00:AA:BB:CC", InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}})
	got, err := BridgeInterfaces(vmi)
	if err != nil {
		t.Fatal(err)
	}
	want := []BridgeInterface{{Name: "blue", PodInterface: "pod16477688c0e", Bridge: "k6t-16477688c0e", Tap: "tap1",
		MAC: "02:00:00:aa:bb:cc", Queues: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BridgeInterfaces (-want +got):\n%s", diff)
	}
	pods, err := PodInterfaces(vmi)
	if err != nil || len(pods) != 1 || pods[0].Name != "default" {
		t.Errorf("PodInterfaces = %+v, %v; want the pod network's only", pods, err)
	}
}
