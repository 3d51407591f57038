package multus

import (
	"encoding/json"
	"fmt"
)

// NetworkStatus is one entry of NetworkStatusAnnotation (the fields NativeVirt reads).
type NetworkStatus struct {
	// Name is the network: "namespace/name" of a NetworkAttachmentDefinition, or the default
	// network's name.
	Name string `json:"name"`
	// Interface is the pod interface.
	Interface string `json:"interface,omitempty"`
	// IPs are the addresses the plugin's IPAM gave the interface, if any.
	IPs []string `json:"ips,omitempty"`
	// MAC is the interface's MAC.
	MAC string `json:"mac,omitempty"`
	// Default is true for the pod's default network.
	Default bool `json:"default,omitempty"`
}

// ParseNetworkStatus reads NetworkStatusAnnotation from a pod's annotations; none when the pod
// has no such annotation (yet).
func ParseNetworkStatus(annotations map[string]string) ([]NetworkStatus, error) {
	raw, ok := annotations[NetworkStatusAnnotation]
	if !ok || raw == "" {
		return nil, nil
	}
	var out []NetworkStatus
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("reading %s: %w", NetworkStatusAnnotation, err)
	}
	return out, nil
}

// ByInterface finds the status of the pod interface iface.
func ByInterface(statuses []NetworkStatus, iface string) (NetworkStatus, bool) {
	for _, s := range statuses {
		if s.Interface == iface {
			return s, true
		}
	}
	return NetworkStatus{}, false
}
