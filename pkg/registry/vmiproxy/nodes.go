package vmiproxy

import (
	"context"
	"fmt"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nativevirt/nativevirt/pkg/streams"
)

// KubeNodeResolver reads node agent endpoints from Node annotations.
type KubeNodeResolver struct {
	Client kubernetes.Interface
}

var _ NodeResolver = KubeNodeResolver{}

// Endpoint returns the node's streams.HandlerEndpointAnnotation. A node without it has no
// running node agent (yet): 503.
func (k KubeNodeResolver) Endpoint(ctx context.Context, nodeName string) (string, error) {
	node, err := k.Client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("node %s: %v", nodeName, err))
	}
	endpoint := node.Annotations[streams.HandlerEndpointAnnotation]
	if endpoint == "" {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf(
			"node %s has no %s annotation: its node agent is not running", nodeName, streams.HandlerEndpointAnnotation))
	}
	if _, _, err := net.SplitHostPort(endpoint); err != nil {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf(
			"node %s: annotation %s=%q is not host:port", nodeName, streams.HandlerEndpointAnnotation, endpoint))
	}
	return endpoint, nil
}
