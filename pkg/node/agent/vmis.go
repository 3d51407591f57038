package agent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	listers "github.com/nativevirt/nativevirt/pkg/client/listers/kubevirt/v1"
)

// vmiFinder finds the VMIs the agent acts on in its two informers: the VMIs
// of this node, and the VMIs migrating to it.
type vmiFinder struct {
	node string
	vmis listers.VirtualMachineInstanceLister
	// targets are the VMIs migrating to this node (nil: it is never a target).
	targets listers.VirtualMachineInstanceLister
}

// get finds a VMI; a VMI handed over to this node is in the first informer.
func (f vmiFinder) get(namespace, name string) (*kubevirtv1.VirtualMachineInstance, error) {
	vmi, err := f.vmis.VirtualMachineInstances(namespace).Get(name)
	if err == nil && vmi.Status.NodeName == f.node {
		return vmi, nil
	}
	if f.targets != nil {
		if t, terr := f.targets.VirtualMachineInstances(namespace).Get(name); terr == nil {
			return t, nil
		} else if !apierrors.IsNotFound(terr) {
			return nil, terr
		}
	}
	return vmi, err
}

// ofKey is the VMI of a namespace/name key, nil when gone.
func (f vmiFinder) ofKey(key string) (*kubevirtv1.VirtualMachineInstance, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, err
	}
	vmi, err := f.get(ns, name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return vmi, err
}

// isMigrationTarget reports whether this node is the target of the VMI's
// migration, before the handover.
func (f vmiFinder) isMigrationTarget(vmi *kubevirtv1.VirtualMachineInstance) bool {
	return isMigrationTargetOn(f.node, vmi)
}

// isMigrationTargetOn reports whether node is the target of the VMI's
// migration, before the handover.
func isMigrationTargetOn(node string, vmi *kubevirtv1.VirtualMachineInstance) bool {
	ms := vmi.Status.MigrationState
	return ms != nil && ms.TargetNode == node && vmi.Status.NodeName != node
}

// reporter writes what the agent observed: VMI statuses and events.
type reporter struct {
	update func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) error
	// record records an event (nil: no events).
	record func(vmi *kubevirtv1.VirtualMachineInstance, eventType, reason, message string)
}

// writeStatus writes status when it differs from the VMI's; nothing when not.
func (r reporter) writeStatus(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, status kubevirtv1.VirtualMachineInstanceStatus) error {
	if equality.Semantic.DeepEqual(vmi.Status, status) {
		return nil
	}
	c := vmi.DeepCopy()
	c.Status = status
	if err := r.update(ctx, c); err != nil {
		return fmt.Errorf("updating the status: %w", err)
	}
	klog.FromContext(ctx).V(2).Info("Status updated", "phase", status.Phase)
	return nil
}

// event records an event on vmi, when the agent has a recorder.
func (r reporter) event(vmi *kubevirtv1.VirtualMachineInstance, eventType, reason, message string) {
	if r.record != nil && vmi != nil {
		r.record(vmi, eventType, reason, message)
	}
}

// secretReader reads the Secrets a VMI refers to (cloud-init data, access credentials).
type secretReader struct {
	get func(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// data reads the data of a Secret in the VMI's namespace, naming the secret when it cannot.
func (s secretReader) data(ctx context.Context, namespace, name string) (map[string][]byte, error) {
	secret, err := s.get(ctx, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("reading secret %s: %w", name, err)
	}
	return secret.Data, nil
}
