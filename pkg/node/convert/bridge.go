package convert

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/multus"
)

// BridgeInterface is one guest interface with the bridge binding on a secondary Multus network,
// as the node agent wires it inside the launcher pod: the pod interface Multus made
// (multus.PodInterfaceName) and a tap that QEMU opens, both on a bridge of their own, so that the
// guest is on the network's L2 segment with its own MAC; the pod interface's address (from the
// network's IPAM) goes to the guest by DHCP. Convert attaches the guest to the same tap with the
// same MAC and queues.
type BridgeInterface struct {
	// Name is the interface's name in the spec (and its network's).
	Name string
	// PodInterface is the pod interface Multus made for the network.
	PodInterface string
	// Bridge is the bridge in the pod: "k6t-" and the pod interface name's hash (15 bytes, the
	// longest Linux interface name).
	Bridge string
	// Tap is the tap device.
	Tap string
	// MAC is the guest's MAC address (the spec's, else a stable generated one).
	MAC string
	// Queues is the number of queue pairs QEMU opens on the tap.
	Queues uint32
	// DHCPOptions are the extra DHCP options of the interface, if any.
	DHCPOptions *kubevirtv1.DHCPOptions
}

func newBridgeInterface(name string) *BridgeInterface {
	pod := multus.PodInterfaceName(name)
	return &BridgeInterface{Name: name, PodInterface: pod, Bridge: "k6t-" + strings.TrimPrefix(pod, "pod")}
}

// BridgeInterfaces lists the instance's bridge interfaces on secondary Multus networks, with the
// devices the node agent prepares for them. It fails, naming the fields, for interfaces Convert
// refuses too.
func BridgeInterfaces(vmi *kubevirtv1.VirtualMachineInstance) ([]BridgeInterface, error) {
	nics, err := instanceNICs(vmi, "bridge")
	if err != nil {
		return nil, err
	}
	var out []BridgeInterface
	for _, n := range nics {
		if n.bridge != nil {
			out = append(out, *n.bridge)
		}
	}
	return out, nil
}

// fieldPathDomain is spec.domain, where the CPU topology is read.
var fieldPathDomain = field.NewPath("spec", "domain")
