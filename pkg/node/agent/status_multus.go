package agent

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/multus"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// multusInterfaceStatus is the status of the interfaces on secondary Multus networks: the
// domain's MAC, the pod interface, and the addresses Multus reported for it (the network's IPAM,
// which the guest gets by DHCP; info source multus-status), else those the guest agent reports
// for the MAC (guest-agent).
func multusInterfaceStatus(vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, details *virt.DomainDetails,
	guest []virt.GuestInterface) []kubevirtv1.VirtualMachineInstanceNetworkInterface {
	secondary := map[string]bool{}
	for _, n := range multus.Networks(vmi) {
		secondary[n.Name] = true
	}
	if len(secondary) == 0 {
		return nil
	}
	statuses, _ := multus.ParseNetworkStatus(pod.Annotations) // a garbled annotation only hides addresses
	var out []kubevirtv1.VirtualMachineInstanceNetworkInterface
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		if !secondary[iface.Name] {
			continue
		}
		sources := []string{"domain"}
		s := kubevirtv1.VirtualMachineInstanceNetworkInterface{
			Name: iface.Name, MAC: strings.ToLower(iface.MacAddress), PodInterfaceName: multus.PodInterfaceName(iface.Name),
			QueueCount: 1, LinkState: "up",
		}
		if iface.State == kubevirtv1.InterfaceStateLinkDown {
			s.LinkState = "down"
		}
		if details != nil && details.InterfaceMACs[iface.Name] != "" {
			s.MAC = details.InterfaceMACs[iface.Name]
		}
		var guestIPs []string
		for _, g := range guest {
			if s.MAC != "" && strings.EqualFold(g.MAC, s.MAC) {
				s.InterfaceName, guestIPs = g.Name, g.IPs
				sources = append(sources, "guest-agent")
			}
		}
		ips := guestIPs
		if st, ok := multus.ByInterface(statuses, s.PodInterfaceName); ok {
			sources = append(sources, "multus-status")
			if len(st.IPs) > 0 {
				ips = st.IPs
			}
		}
		if len(ips) > 0 {
			s.IP, s.IPs = ips[0], append([]string(nil), ips...)
		}
		s.InfoSource = strings.Join(sources, ", ")
		out = append(out, s)
	}
	return out
}
