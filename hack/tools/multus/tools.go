//go:build tools

// Package tools pins Multus (gopkg.in/k8snetworkplumbingwg/multus-cni.v4), whose thin plugin
// cmd/multus hack/cluster/multus.sh builds into the local cluster's CNI bin directory. A module
// of its own, like hack/tools/coredns, so that Multus's dependencies never enter NativeVirt's
// go.mod.
//
// The thin plugin suits this cluster: every node is a containerd and a kubelet on this host,
// CNI plugins run as the host's root, and no daemon per node is needed. Multus reads the pod's
// k8s.v1.cni.cncf.io/networks annotation and the NetworkAttachmentDefinitions through its
// kubeconfig, calls the delegates, and writes k8s.v1.cni.cncf.io/network-status back.
package tools

import (
	_ "gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus"
)
