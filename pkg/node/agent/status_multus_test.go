package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/multus"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

func TestMultusInterfaceStatus(t *testing.T) {
	vmi := &kubevirtv1.VirtualMachineInstance{}
	vmi.Spec.Networks = []kubevirtv1.Network{
		{Name: "default", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}},
		{Name: "blue", NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "blue-net"}}},
		{Name: "red", NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: "red-net"}}},
	}
	bridge := kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}
	vmi.Spec.Domain.Devices.Interfaces = []kubevirtv1.Interface{{Name: "default"},
		{Name: "blue", MacAddress: "02:00:00:AA:BB:CC", InterfaceBindingMethod: bridge}, {Name: "red", InterfaceBindingMethod: bridge}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{multus.NetworkStatusAnnotation: `[
{"name":"nativevirt","interface":"eth0","ips":["10.244.1.5"],"default":true},
{"name":"ns/blue-net","interface":"` + multus.PodInterfaceName("blue") + `","ips":["192.168.50.3"],"mac":"02:00:00:aa:bb:cc"}]`}}}
	details := &virt.DomainDetails{InterfaceMACs: map[string]string{"blue": "02:00:00:aa:bb:cc", "red": "52:54:00:01:02:03"}}
	guest := []virt.GuestInterface{{Name: "eth1", MAC: "02:00:00:aa:bb:cc", IPs: []string{"192.168.50.3", "fe80::1"}},
		{Name: "eth2", MAC: "52:54:00:01:02:03", IPs: []string{"172.16.0.9"}}}
	got := multusInterfaceStatus(vmi, pod, details, guest)
	want := []kubevirtv1.VirtualMachineInstanceNetworkInterface{
		{Name: "blue", MAC: "02:00:00:aa:bb:cc", PodInterfaceName: multus.PodInterfaceName("blue"), InterfaceName: "eth1",
			IP: "192.168.50.3", IPs: []string{"192.168.50.3"}, InfoSource: "domain, guest-agent, multus-status", QueueCount: 1, LinkState: "up"},
		{Name: "red", MAC: "52:54:00:01:02:03", PodInterfaceName: multus.PodInterfaceName("red"), InterfaceName: "eth2",
			IP: "172.16.0.9", IPs: []string{"172.16.0.9"}, InfoSource: "domain, guest-agent", QueueCount: 1, LinkState: "up"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}
