// Package heartbeat keeps the node agent's marks on its Node: the labels the
// launcher pods are scheduled by (kubevirt.io/schedulable, whether the node
// emulates or uses KVM, the CPU models QEMU can give guests), the endpoint of its stream server, and a
// timestamp refreshed every Interval. The VMI controller marks a node
// unschedulable when the timestamp is older than 120 s, so a dead agent stops
// receiving new VMIs.
package heartbeat

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// Node labels and annotations written by the agent.
const (
	// SchedulableLabel is "true" while the node runs a healthy agent.
	SchedulableLabel = "kubevirt.io/schedulable"
	// EmulationLabel is "true" when guests run under TCG emulation, "false" with KVM.
	EmulationLabel = "nativevirt.io/emulation"
	// CPUModelLabelPrefix prefixes the labels of the CPU models guests can have here (KubeVirt's).
	CPUModelLabelPrefix = launcherpod.CPUModelLabelPrefix
	// HeartbeatAnnotation holds the time of the latest heartbeat (RFC 3339).
	HeartbeatAnnotation = "kubevirt.io/heartbeat"
	// Interval is how often the heartbeat is written.
	Interval = 30 * time.Second
)

// Heartbeat marks one node.
type Heartbeat struct {
	// Client writes the Node.
	Client kubernetes.Interface
	// NodeName is the node.
	NodeName string
	// Emulation says whether guests are emulated.
	Emulation bool
	// Endpoint is the stream server's host:port, as the apiserver reaches it.
	Endpoint string
	// CPUModels are the CPU models QEMU can give guests on this node: each is the label
	// CPUModelLabelPrefix+model, "true"; the first beat removes the node's other such labels.
	CPUModels []string
	// cleaned is set once stale CPU model labels were removed.
	cleaned bool
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Beat writes the marks once.
func (h *Heartbeat) Beat(ctx context.Context) error {
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	labels := map[string]any{
		SchedulableLabel: "true",
		EmulationLabel:   strconv.FormatBool(h.Emulation),
	}
	for _, m := range h.CPUModels {
		labels[CPUModelLabelPrefix+m] = "true"
	}
	if !h.cleaned {
		// Labels of models this node no longer offers (another QEMU, KVM gone) must go.
		n, err := h.Client.CoreV1().Nodes().Get(ctx, h.NodeName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("heartbeat on node %s: %w", h.NodeName, err)
		}
		for k := range n.Labels {
			if _, keep := labels[k]; !keep && strings.HasPrefix(k, CPUModelLabelPrefix) {
				labels[k] = nil
			}
		}
	}
	patch := map[string]interface{}{
		"metadata": map[string]interface{}{
			"labels": labels,
			"annotations": map[string]string{
				HeartbeatAnnotation:               now().UTC().Format(time.RFC3339),
				streams.HandlerEndpointAnnotation: h.Endpoint,
			},
		},
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if _, err := h.Client.CoreV1().Nodes().Patch(ctx, h.NodeName, types.MergePatchType, data, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("heartbeat on node %s: %w", h.NodeName, err)
	}
	h.cleaned = true
	return nil
}

// Run beats every Interval until ctx ends; failures are logged and retried
// on the next beat.
func (h *Heartbeat) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := h.Beat(ctx); err != nil {
			logger.Error(err, "Heartbeat failed")
			return
		}
		logger.V(4).Info("Heartbeat written", "node", h.NodeName)
	}, Interval)
}
