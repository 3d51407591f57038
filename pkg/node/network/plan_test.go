package network

import (
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/dhcp"
)

// podVMI is an instance with one masquerade interface on the pod network.
func podVMI(iface kubevirtv1.Interface, pod *kubevirtv1.PodNetwork) *kubevirtv1.VirtualMachineInstance {
	if iface.Name == "" {
		iface.Name = "default"
	}
	if pod == nil {
		pod = &kubevirtv1.PodNetwork{}
	}
	iface.Masquerade = &kubevirtv1.InterfaceMasquerade{}
	vmi := &kubevirtv1.VirtualMachineInstance{}
	vmi.Namespace, vmi.Name = "ns1", "vm1"
	vmi.Spec.Domain.Devices.Interfaces = []kubevirtv1.Interface{iface}
	vmi.Spec.Networks = []kubevirtv1.Network{{Name: iface.Name, NetworkSource: kubevirtv1.NetworkSource{Pod: pod}}}
	return vmi
}

func ip(s string) net.IP { return net.ParseIP(s).To4() }

func TestPlanFor(t *testing.T) {
	vmi := podVMI(kubevirtv1.Interface{MacAddress: "02:00:00:00:00:01", Ports: []kubevirtv1.Port{{Port: 22}}}, nil)
	p, err := PlanFor(vmi)
	if err != nil {
		t.Fatal(err)
	}
	want := &Plan{PodInterface: "eth0", Bridge: "k6t-eth0", Hostname: "vm1", NIC: convert.PodInterface{
		Name: "default", Tap: "tap0", MAC: "02:00:00:00:00:01", Queues: 1,
		Gateway: ip("10.0.2.1"), Guest: ip("10.0.2.2"), PrefixLength: 24, Ports: []kubevirtv1.Port{{Port: 22}},
	}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	vmi.Spec.Hostname = "web"
	if p, _ := PlanFor(vmi); p.Hostname != "web" {
		t.Errorf("hostname %q, want the spec's web", p.Hostname)
	}
	vmi.Spec.Hostname, vmi.Name = "", "Not_A_Hostname"
	if p, _ := PlanFor(vmi); p.Hostname != "" {
		t.Errorf("hostname %q for an instance name that is no host name, want none", p.Hostname)
	}

	none, err := PlanFor(&kubevirtv1.VirtualMachineInstance{})
	if none != nil || err != nil {
		t.Errorf("no interfaces: %+v, %v; want nil, nil", none, err)
	}
	if _, err := PlanFor(podVMI(kubevirtv1.Interface{Model: "vmxnet3"}, nil)); err == nil || !strings.Contains(err.Error(), "model") {
		t.Errorf("bad interface: %v, want the converter's error", err)
	}
	two := podVMI(kubevirtv1.Interface{}, nil)
	two.Spec.Domain.Devices.Interfaces = append(two.Spec.Domain.Devices.Interfaces, kubevirtv1.Interface{Name: "second"})
	two.Spec.Networks = append(two.Spec.Networks, kubevirtv1.Network{Name: "second", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}})
	if _, err := PlanFor(two); err == nil || !strings.Contains(err.Error(), "takes one") {
		t.Errorf("two pod interfaces: %v, want an error", err)
	}
}

func TestDHCPConfig(t *testing.T) {
	vmi := podVMI(kubevirtv1.Interface{MacAddress: "02:00:00:00:00:01", DHCPOptions: &kubevirtv1.DHCPOptions{
		BootFileName: "boot.efi", TFTPServerName: "tftp.example", NTPServers: []string{"10.0.0.5"},
		PrivateOptions: []kubevirtv1.DHCPPrivateOptions{{Option: 240, Value: "v"}},
	}}, &kubevirtv1.PodNetwork{VMNetworkCIDR: "192.168.7.0/24"})
	p, err := PlanFor(vmi)
	if err != nil {
		t.Fatal(err)
	}
	got := p.DHCPConfig(1450)
	want := &dhcp.Config{
		Interface: "k6t-eth0", ServerIP: ip("192.168.7.1"), ClientIP: ip("192.168.7.2"), PrefixLength: 24,
		ClientMAC: "02:00:00:00:00:01", MTU: 1450, Hostname: "vm1",
		BootFileName: "boot.efi", TFTPServerName: "tftp.example", NTPServers: []net.IP{ip("10.0.0.5")},
		PrivateOptions: []dhcp.PrivateOption{{Code: 240, Value: "v"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("the launcher would refuse it: %v", err)
	}
}
