package network

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/dhcp"
)

func bridgeVMI() *kubevirtv1.VirtualMachineInstance {
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm1"}}
	vmi.Spec.Networks = []kubevirtv1.Network{{Name: "blue",
		NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "blue-net"}}}}
	vmi.Spec.Domain.Devices.Interfaces = []kubevirtv1.Interface{{Name: "blue", MacAddress: "02:00:00:aa:bb:cc",
		InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}}}
	return vmi
}

func TestApplyBridges(t *testing.T) {
	vmi := bridgeVMI()
	bridges, err := convert.BridgeInterfaces(vmi)
	if err != nil {
		t.Fatal(err)
	}
	// Multus gave the pod interface the guest's MAC (the annotation's mac) and the NAD's address.
	f := &fakeRunner{links: `[{"ifname":"lo","mtu":65536,"addr_info":[]},
{"ifname":"pod16477688c0e","mtu":1400,"address":"02:00:00:aa:bb:cc","linkinfo":{"info_kind":"veth"},
 "addr_info":[{"family":"inet","local":"192.168.50.7","prefixlen":24}]}]`}
	dir := t.TempDir()
	if err := ApplyBridges(context.Background(), f, vmi, bridges, dir); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ip -json -details address show",
		"ip -batch - <<" + strings.Join([]string{
			"link add name k6t-16477688c0e type bridge",
			"tuntap add dev tap0 mode tap user 0 group 0",
			"link set dev pod16477688c0e address 02:00:00:aa:bb:33",
			"link set dev k6t-16477688c0e mtu 1400 up",
			"link set dev pod16477688c0e master k6t-16477688c0e up",
			"link set dev tap0 master k6t-16477688c0e mtu 1400 up",
			"address flush dev pod16477688c0e",
			"address replace 169.254.75.10/32 dev k6t-16477688c0e",
		}, "\n") + "\n",
	}
	if diff := cmp.Diff(want, f.calls); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	cfg, err := dhcp.ReadConfig(filepath.Join(dir, BridgeDHCPFile("k6t-16477688c0e")))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientIP.String() != "192.168.50.7" || cfg.PrefixLength != 24 || cfg.ClientMAC != "02:00:00:aa:bb:cc" ||
		cfg.ServerIP.String() != "169.254.75.10" || !cfg.NoRouter || cfg.MTU != 1400 {
		t.Errorf("DHCP configuration %+v", cfg)
	}

	// Prepared again (the address is the guest's now): same links, the configuration kept.
	f = &fakeRunner{links: `[{"ifname":"pod16477688c0e","mtu":1400,"address":"02:00:00:aa:bb:33","master":"k6t-16477688c0e","addr_info":[]},
{"ifname":"k6t-16477688c0e","mtu":1400,"linkinfo":{"info_kind":"bridge"},"addr_info":[{"family":"inet","local":"169.254.75.10","prefixlen":32}]},
{"ifname":"tap0","mtu":1400,"linkinfo":{"info_kind":"tun","info_data":{"type":"tap"}},"addr_info":[]}]`}
	if err := ApplyBridges(context.Background(), f, vmi, bridges, dir); err != nil {
		t.Fatal(err)
	}
	if len(f.calls) != 2 || strings.Contains(f.calls[1], "link add") || strings.Contains(f.calls[1], "tuntap") {
		t.Errorf("second preparation: %q", f.calls)
	}
	if again, err := dhcp.ReadConfig(filepath.Join(dir, BridgeDHCPFile("k6t-16477688c0e"))); err != nil || !again.ClientIP.Equal(cfg.ClientIP) {
		t.Errorf("configuration after the second preparation: %+v, %v", again, err)
	}

	// No pod interface: Multus did not attach the network.
	f = &fakeRunner{links: `[]`}
	if err := ApplyBridges(context.Background(), f, vmi, bridges, dir); err == nil || !strings.Contains(err.Error(), "pod16477688c0e") {
		t.Errorf("missing pod interface: %v", err)
	}
}
