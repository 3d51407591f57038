package app

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/node/qemucaps"
)

// nodeAddress is the node's InternalIP (else first address).
func nodeAddress(ctx context.Context, kube kubernetes.Interface, name string) (string, error) {
	n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading node %s: %w", name, err)
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address, nil
		}
	}
	if len(n.Status.Addresses) > 0 {
		return n.Status.Addresses[0].Address, nil
	}
	return "", fmt.Errorf("node %s has no address; set --advertise-address", name)
}

// cpuModels are the CPU models the node's QEMU offers guests (of its accelerator), from the
// capabilities the DaemonSet's probe wrote; none without them (guests that name a model are then
// not scheduled here).
func cpuModels(ctx context.Context, dir string, emulation bool) []string {
	if dir == "" {
		return nil
	}
	kind := qemucaps.Kind(emulation)
	models, err := qemucaps.UsableCPUModels(dir, kind)
	if err != nil {
		klog.FromContext(ctx).Error(err, "No CPU models to label the node with: guests that name a CPU model will not be scheduled here")
		return nil
	}
	klog.FromContext(ctx).Info("CPU models for guests", "kind", kind, "models", models)
	return models
}
