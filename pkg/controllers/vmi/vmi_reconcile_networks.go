package vmi

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/conditions"
	"github.com/nativevirt/nativevirt/pkg/multus"
)

// NetworkAttachmentDefinitions is the resource of Multus's networks.
var NetworkAttachmentDefinitions = schema.GroupVersionResource{
	Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions",
}

// errNetworkAttachmentMissing (wrapped) is returned by ensurePod when a Multus network of the
// instance has no NetworkAttachmentDefinition: the pod is created once it exists (retried with
// back-off), never without the network.
var errNetworkAttachmentMissing = errors.New("network attachment definition missing")

// NetworkAttachmentLookup reports whether the NetworkAttachmentDefinition namespace/name exists.
type NetworkAttachmentLookup func(ctx context.Context, namespace, name string) (bool, error)

// DynamicNetworkAttachmentLookup looks NetworkAttachmentDefinitions up through client. It asks
// kube-apiserver each time: only instances with Multus networks ask, once per attempt to create
// their pod, so no informer (and no watch on a CRD that may not be installed) is needed.
func DynamicNetworkAttachmentLookup(client dynamic.Interface) NetworkAttachmentLookup {
	return func(ctx context.Context, namespace, name string) (bool, error) {
		_, err := client.Resource(NetworkAttachmentDefinitions).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		}
		return false, err
	}
}

// checkNetworkAttachments makes sure every Multus network of the instance has its
// NetworkAttachmentDefinition; it returns an error wrapping errNetworkAttachmentMissing that
// names the first one missing, as KubeVirt says it.
func (a *podAPI) checkNetworkAttachments(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) error {
	for _, n := range vmi.Spec.Networks {
		if n.Multus == nil {
			continue
		}
		if a.nadExists == nil {
			return fmt.Errorf("%w: this controller cannot look NetworkAttachmentDefinitions up", errNetworkAttachmentMissing)
		}
		ns, name := multus.SplitNetworkName(n.Multus.NetworkName, vmi.Namespace)
		ok, err := a.nadExists(ctx, ns, name)
		if err != nil {
			return fmt.Errorf("looking up network attachment definition %s/%s: %w", ns, name, err)
		}
		if !ok {
			return fmt.Errorf("%w: failed to locate network attachment definition %s/%s", errNetworkAttachmentMissing, ns, name)
		}
	}
	return nil
}

// networkAttachmentMessage is the message of a missing NetworkAttachmentDefinition, without the
// sentinel's text.
func networkAttachmentMessage(err error) string {
	msg := err.Error()
	prefix := errNetworkAttachmentMissing.Error() + ": "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		return msg[len(prefix):]
	}
	return msg
}

// setSynchronizedFailure marks the status Synchronized=False with reason FailedCreate (KubeVirt's
// condition for a pod that cannot be created), or clears such a mark when err is nil.
func setSynchronizedFailure(st *kubevirtv1.VirtualMachineInstanceStatus, err error) {
	if err == nil {
		if c := conditions.VMI(st, kubevirtv1.VirtualMachineInstanceSynchronized); c != nil && c.Reason == ReasonFailedCreate {
			conditions.DropVMI(st, kubevirtv1.VirtualMachineInstanceSynchronized)
		}
		return
	}
	msg := networkAttachmentMessage(err)
	if c := conditions.VMI(st, kubevirtv1.VirtualMachineInstanceSynchronized); c != nil && c.Status == corev1.ConditionFalse &&
		c.Reason == ReasonFailedCreate && c.Message == msg {
		return
	}
	conditions.SetVMI(st, kubevirtv1.VirtualMachineInstanceCondition{Type: kubevirtv1.VirtualMachineInstanceSynchronized,
		Status: corev1.ConditionFalse, Reason: ReasonFailedCreate, Message: msg, LastTransitionTime: metav1.Now()})
}
