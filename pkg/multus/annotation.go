package multus

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// Pod annotations Multus reads and writes.
const (
	// NetworksAnnotation lists the secondary networks of a pod.
	NetworksAnnotation = "k8s.v1.cni.cncf.io/networks"
	// DefaultNetworkAnnotation names the network replacing the cluster's default network.
	DefaultNetworkAnnotation = "v1.multus-cni.io/default-network"
	// NetworkStatusAnnotation is Multus's report of a pod's attachments.
	NetworkStatusAnnotation = "k8s.v1.cni.cncf.io/network-status"
)

// NetworkSelection is one entry of NetworksAnnotation (the Network Plumbing Working Group's
// NetworkSelectionElement, with the fields KubeVirt sets).
type NetworkSelection struct {
	// Name is the NetworkAttachmentDefinition's name.
	Name string `json:"name"`
	// Namespace is its namespace.
	Namespace string `json:"namespace"`
	// Interface is the pod interface Multus creates.
	Interface string `json:"interface,omitempty"`
	// MAC is the MAC Multus asks the plugin to set, if any.
	MAC string `json:"mac,omitempty"`
}

// PodInterfaceName is the pod interface of the spec network named networkName: "pod" and the
// first 11 hex digits of the SHA-256 of the name, as KubeVirt's hashed name scheme has it (stable,
// and short enough for a Linux interface name, 15 bytes).
func PodInterfaceName(networkName string) string {
	sum := sha256.Sum256([]byte(networkName))
	return "pod" + hex.EncodeToString(sum[:])[:11]
}

// SplitNetworkName splits a networkName ("name" or "namespace/name") into the
// NetworkAttachmentDefinition's namespace (defaultNamespace when it names none) and name.
func SplitNetworkName(networkName, defaultNamespace string) (namespace, name string) {
	if ns, n, ok := strings.Cut(networkName, "/"); ok {
		return ns, n
	}
	return defaultNamespace, networkName
}

// Networks are the instance's secondary Multus networks (not the default one), in spec order.
func Networks(vmi *kubevirtv1.VirtualMachineInstance) []kubevirtv1.Network {
	var out []kubevirtv1.Network
	for _, n := range vmi.Spec.Networks {
		if n.Multus != nil && !n.Multus.Default {
			out = append(out, n)
		}
	}
	return out
}

// PodAnnotations are the launcher pod's Multus annotations for vmi: NetworksAnnotation for its
// secondary networks and DefaultNetworkAnnotation for a default Multus network; none for an
// instance without Multus networks.
func PodAnnotations(vmi *kubevirtv1.VirtualMachineInstance) (map[string]string, error) {
	out := map[string]string{}
	macs := map[string]string{}
	for _, in := range vmi.Spec.Domain.Devices.Interfaces {
		macs[in.Name] = in.MacAddress
	}
	var selections []NetworkSelection
	for _, n := range vmi.Spec.Networks {
		if n.Multus == nil {
			continue
		}
		ns, name := SplitNetworkName(n.Multus.NetworkName, vmi.Namespace)
		if n.Multus.Default {
			out[DefaultNetworkAnnotation] = ns + "/" + name
			continue
		}
		selections = append(selections, NetworkSelection{
			Name: name, Namespace: ns, Interface: PodInterfaceName(n.Name), MAC: strings.ToLower(macs[n.Name]),
		})
	}
	if len(selections) > 0 {
		data, err := json.Marshal(selections)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", NetworksAnnotation, err)
		}
		out[NetworksAnnotation] = string(data)
	}
	return out, nil
}
