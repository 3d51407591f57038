// Package multus is what NativeVirt says to Multus and reads back from it, as KubeVirt does
// (pkg/network/multus and namescheme in KubeVirt):
//   - the launcher pod's k8s.v1.cni.cncf.io/networks annotation, a JSON list of the instance's
//     Multus networks with stable pod interface names ("pod" + 11 hex digits of the SHA-256 of
//     the network's name in the spec) and the interface's MAC when the spec sets one;
//   - v1.multus-cni.io/default-network for a Multus network that replaces the pod network;
//   - the k8s.v1.cni.cncf.io/network-status annotation Multus writes on the pod: per attachment
//     its pod interface, MAC and addresses.
//
// It imports neither the controller nor the node agent: both use it.
package multus
