package vmi

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/conditions"
)

// withMultus gives the instance a bridge interface on the Multus network networkName.
func withMultus(networkName string) func(*kubevirtv1.VirtualMachineInstance) {
	return func(vmi *kubevirtv1.VirtualMachineInstance) {
		vmi.Spec.Networks = append(vmi.Spec.Networks, kubevirtv1.Network{Name: "blue",
			NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: networkName}}})
		vmi.Spec.Domain.Devices.Interfaces = append(vmi.Spec.Domain.Devices.Interfaces,
			kubevirtv1.Interface{Name: "blue", InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}})
	}
}

// TestSyncWaitsForNetworkAttachments: no pod without the NetworkAttachmentDefinition, the
// instance saying which one is missing; the pod once it exists, and the condition gone.
func TestSyncWaitsForNetworkAttachments(t *testing.T) {
	f := newFixture(t, testVMI(withMultus("other/blue-net")))
	exists := false
	var asked, events []string
	f.c.pods.event = func(_ *kubevirtv1.VirtualMachineInstance, eventType, reason, message string) {
		events = append(events, eventType+" "+reason+" "+message)
	}
	f.c.pods.nadExists = func(_ context.Context, namespace, name string) (bool, error) {
		asked = append(asked, namespace+"/"+name)
		return exists, nil
	}
	_, err := f.c.sync(context.Background(), "default/vmi")
	if !errors.Is(err, errNetworkAttachmentMissing) {
		t.Fatalf("sync without the NetworkAttachmentDefinition: err %v, want errNetworkAttachmentMissing", err)
	}
	if len(asked) != 1 || asked[0] != "other/blue-net" {
		t.Errorf("asked for %v, want [other/blue-net]", asked)
	}
	if pods := f.pods(); len(pods) != 0 {
		t.Fatalf("%d pods created without the network", len(pods))
	}
	vmi := f.refresh()
	c := conditions.VMI(&vmi.Status, kubevirtv1.VirtualMachineInstanceSynchronized)
	if c == nil || c.Status != corev1.ConditionFalse || c.Reason != ReasonFailedCreate ||
		c.Message != "failed to locate network attachment definition other/blue-net" {
		t.Fatalf("Synchronized condition %+v", c)
	}
	if vmi.Status.Phase != kubevirtv1.Pending {
		t.Errorf("phase %q, want Pending", vmi.Status.Phase)
	}
	if len(events) != 1 || events[0] != "Warning FailedCreate failed to locate network attachment definition other/blue-net" {
		t.Errorf("events %q", events)
	}
	if got := f.sync0(t); len(got) != 0 {
		t.Errorf("second sync with the same missing network wrote %v", got)
	}

	exists = true
	if got := f.sync(); len(got) != 1 || got[0] != "create pods" {
		t.Fatalf("sync with the NetworkAttachmentDefinition wrote %v, want the pod", got)
	}
	pod := f.pods()[0].DeepCopy()
	bound("node1")(pod)
	_ = f.podStore.Add(pod)
	f.c.podEvents.OnAdd(pod, false)
	f.sync()
	vmi = f.refresh()
	if c := conditions.VMI(&vmi.Status, kubevirtv1.VirtualMachineInstanceSynchronized); c != nil {
		t.Errorf("Synchronized condition left once the pod exists: %+v", c)
	}
}

// sync0 runs one sync that is expected to fail with errNetworkAttachmentMissing and returns
// the writes made.
func (f *fixture) sync0(t *testing.T) []string {
	t.Helper()
	f.kube.ClearActions()
	f.kv.ClearActions()
	if _, err := f.c.sync(context.Background(), "default/vmi"); !errors.Is(err, errNetworkAttachmentMissing) {
		t.Fatalf("sync: %v", err)
	}
	var writes []string
	for _, a := range append(f.kv.Actions(), f.kube.Actions()...) {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			writes = append(writes, v+" "+a.GetResource().Resource)
		}
	}
	return writes
}
