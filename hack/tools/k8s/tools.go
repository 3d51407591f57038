//go:build tools

// Package tools pins the Kubernetes components that hack/build-k8s.sh builds
// for the local single-node cluster. It is a separate module so that
// k8s.io/kubernetes and its many dependencies never enter NativeVirt's own
// go.mod; every k8s.io staging module is replaced by its published v0.x
// release because k8s.io/kubernetes refers to them by relative paths.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
