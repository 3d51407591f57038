package convert

import (
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
	vmi.Name = "vm1"
	vmi.Spec.Domain.Devices.Interfaces = []kubevirtv1.Interface{iface}
	vmi.Spec.Networks = []kubevirtv1.Network{{Name: iface.Name, NetworkSource: kubevirtv1.NetworkSource{Pod: pod}}}
	return vmi
}

func TestTapInterfaces(t *testing.T) {
	masq := kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}}
	tests := []struct {
		name  string
		vmi   *kubevirtv1.VirtualMachineInstance
		taps  map[string]string
		vcpus uint32
		want  []Interface
	}{{
		name:  "defaults: virtio on tap0 without option ROM",
		vmi:   netVMI(kubevirtv1.Interface{InterfaceBindingMethod: masq}, nil),
		vcpus: 1,
		want: []Interface{{Type: "ethernet", Target: &InterfaceTarget{Dev: "tap0", Managed: "no"}, Model: &InterfaceModel{Type: "virtio"},
			ROM: &InterfaceROM{Enabled: "no"}, Alias: &Alias{Name: "ua-default"}}},
	}, {
		name: "binding left empty means masquerade; everything set",
		vmi: func() *kubevirtv1.VirtualMachineInstance {
			v := netVMI(kubevirtv1.Interface{Name: "net1", MacAddress: "02:AA:BB:CC:DD:EE", BootOrder: ptr(int32(3)), PciAddress: "0000:01:00.0",
				ACPIIndex: 2, State: "down"}, nil)
			v.Spec.Domain.Devices.NetworkInterfaceMultiQueue = ptr(true)
			v.Spec.Domain.Devices.UseVirtioTransitional = ptr(true)
			return v
		}(),
		taps:  map[string]string{"net1": "nvtap7"},
		vcpus: 4,
		want: []Interface{{Type: "ethernet", MAC: &MAC{Address: "02:aa:bb:cc:dd:ee"}, Target: &InterfaceTarget{Dev: "nvtap7", Managed: "no"},
			Model: &InterfaceModel{Type: "virtio-transitional"}, Driver: &InterfaceDriver{Queues: 4}, Link: &InterfaceLink{State: "down"},
			Boot: &Boot{Order: 3}, Alias: &Alias{Name: "ua-net1"}, ACPI: &InterfaceACPI{Index: 2},
			Address: &Address{Type: "pci", Domain: "0x0000", Bus: "0x01", Slot: "0x00", Function: "0x0"}}},
	}, {
		name:  "emulated model: no queues",
		vmi:   netVMI(kubevirtv1.Interface{Model: "rtl8139", InterfaceBindingMethod: masq}, nil),
		vcpus: 4,
		want: []Interface{{Type: "ethernet", Target: &InterfaceTarget{Dev: "tap0", Managed: "no"}, Model: &InterfaceModel{Type: "rtl8139"},
			ROM: &InterfaceROM{Enabled: "no"}, Alias: &Alias{Name: "ua-default"}}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan, errs := convertInterfaces(tc.vmi, Context{InterfaceMode: TapMasquerade, TapDevices: tc.taps}, tc.vcpus, false)
			checkErrs(t, errs, "")
			if diff := cmp.Diff(tc.want, plan.interfaces); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(plan.qemuArgs) != 0 {
				t.Errorf("tap mode passed QEMU arguments: %q", plan.qemuArgs)
			}
		})
	}
}

func TestSlirpInterfaces(t *testing.T) {
	tests := []struct {
		name     string
		vmi      *kubevirtv1.VirtualMachineInstance
		diskBoot bool
		want     []string
		wantErr  string
	}{{
		name: "defaults: KubeVirt's addresses, no forwards, no ROM",
		vmi:  netVMI(kubevirtv1.Interface{}, nil),
		want: []string{"-netdev", "user,id=nv-net-default,net=10.0.2.0/24,host=10.0.2.1,dhcpstart=10.0.2.2,hostname=vm1",
			"-device", `{"driver":"virtio-net-pci","netdev":"nv-net-default","id":"nv-net-default","romfile":""}`},
	}, {
		name: "ports, CIDR, hostname, MAC, boot order, ACPI index, DHCP boot options",
		vmi: func() *kubevirtv1.VirtualMachineInstance {
			v := netVMI(kubevirtv1.Interface{Model: "e1000", MacAddress: "02:00:00:00:00:01", BootOrder: ptr(int32(2)), ACPIIndex: 1,
				Ports:       []kubevirtv1.Port{{Port: 22}, {Port: 5353, Protocol: "UDP"}, {Port: 8080, Protocol: "tcp"}},
				DHCPOptions: &kubevirtv1.DHCPOptions{BootFileName: "boot,x.efi"}},
				&kubevirtv1.PodNetwork{VMNetworkCIDR: "192.168.50.0/28"})
			v.Spec.Hostname = "web"
			return v
		}(),
		diskBoot: true,
		want: []string{"-netdev", "user,id=nv-net-default,net=192.168.50.0/28,host=192.168.50.1,dhcpstart=192.168.50.2,hostname=web," +
			"bootfile=boot,,x.efi,hostfwd=tcp::22-192.168.50.2:22,hostfwd=udp::5353-192.168.50.2:5353,hostfwd=tcp::8080-192.168.50.2:8080",
			"-device", `{"driver":"e1000","netdev":"nv-net-default","id":"nv-net-default","mac":"02:00:00:00:00:01","bootindex":2,"acpi-index":1}`},
	}, {
		name: "interface boot order without disk boot orders",
		vmi: func() *kubevirtv1.VirtualMachineInstance {
			v := netVMI(kubevirtv1.Interface{BootOrder: ptr(int32(1))}, nil)
			v.Spec.Domain.Devices.Disks = []kubevirtv1.Disk{{Name: "d"}}
			return v
		}(),
		wantErr: "interfaces[0].bootOrder",
	}, {
		name:    "PCI address",
		vmi:     netVMI(kubevirtv1.Interface{PciAddress: "0000:01:00.0"}, nil),
		wantErr: "interfaces[0].pciAddress",
	}, {
		name:    "link down",
		vmi:     netVMI(kubevirtv1.Interface{State: "down"}, nil),
		wantErr: "interfaces[0].state",
	}, {
		name: "multi-queue",
		vmi: func() *kubevirtv1.VirtualMachineInstance {
			v := netVMI(kubevirtv1.Interface{}, nil)
			v.Spec.Domain.Devices.NetworkInterfaceMultiQueue = ptr(true)
			return v
		}(),
		wantErr: "networkInterfaceMultiqueue",
	}, {
		name:    "NTP servers",
		vmi:     netVMI(kubevirtv1.Interface{DHCPOptions: &kubevirtv1.DHCPOptions{NTPServers: []string{"10.0.0.1"}}}, nil),
		wantErr: "interfaces[0].dhcpOptions",
	}, {
		name:    "IPv6 CIDR",
		vmi:     netVMI(kubevirtv1.Interface{}, &kubevirtv1.PodNetwork{VMNetworkCIDR: "fd00::/64"}),
		wantErr: "vmNetworkCIDR",
	}, {
		name:    "CIDR too small",
		vmi:     netVMI(kubevirtv1.Interface{}, &kubevirtv1.PodNetwork{VMNetworkCIDR: "10.0.0.0/30"}),
		wantErr: "at most /29",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan, errs := convertInterfaces(tc.vmi, Context{InterfaceMode: SlirpMasquerade}, 2, tc.diskBoot)
			checkErrs(t, errs, tc.wantErr)
			if tc.wantErr != "" {
				return
			}
			if diff := cmp.Diff(tc.want, plan.qemuArgs); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(plan.interfaces) != 0 {
				t.Errorf("slirp mode made libvirt interfaces: %v", plan.interfaces)
			}
		})
	}
}

func TestCheckInterfaceErrors(t *testing.T) {
	tests := []struct {
		name    string
		vmi     *kubevirtv1.VirtualMachineInstance
		wantErr string
	}{
		{"bridge binding", netVMI(kubevirtv1.Interface{InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}}, nil), `"bridge": supported values: "masquerade"`},
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
			"Multus network",
			func() *kubevirtv1.VirtualMachineInstance {
				v := netVMI(kubevirtv1.Interface{}, nil)
				v.Spec.Networks[0].NetworkSource = kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "x"}}
				return v
			}(),
			"Multus networks are not supported",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []InterfaceMode{TapMasquerade, SlirpMasquerade} {
				_, errs := convertInterfaces(tc.vmi, Context{InterfaceMode: mode}, 1, true)
				checkErrs(t, errs, tc.wantErr)
			}
		})
	}
}
