package integration

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	clientset "github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// actionPath is where a subresource is served: "v1" and "v1alpha3" under kubevirt.io, "sub"
// under subresources.kubevirt.io/v1 (virtctl's path).
func actionPath(variant, resource, name, action string) string {
	if variant == "sub" {
		return fmt.Sprintf("/apis/subresources.kubevirt.io/v1/namespaces/%s/%s/%s/%s", ns, resource, name, action)
	}
	return fmt.Sprintf("/apis/kubevirt.io/%s/namespaces/%s/%s/%s/%s", variant, ns, resource, name, action)
}

// pathVariants lists every place an action is served.
var pathVariants = []string{"v1", "v1alpha3", "sub"}

// vmState is how a test VM starts out.
type vmState struct {
	runStrategy kubevirtv1.VirtualMachineRunStrategy // "" with running==nil: neither field
	running     *bool
	vmiPhase    kubevirtv1.VirtualMachineInstancePhase // "" : no instance
	paused      bool                                   // instance has the Paused condition
	pending     []kubevirtv1.StateChangeRequestAction  // status.stateChangeRequests
}

// makeVM creates the VM (and its instance) described by st and returns the instance, if any.
func makeVM(t *testing.T, c clientset.Interface, name string, st vmState) *kubevirtv1.VirtualMachineInstance {
	t.Helper()
	ctx := context.Background()
	vm := &kubevirtv1.VirtualMachine{}
	if err := yaml.Unmarshal([]byte(framework.VMYAML(name)), vm); err != nil {
		t.Fatal(err)
	}
	vm.Namespace = ns
	vm.Spec.RunStrategy = nil
	if st.runStrategy != "" {
		s := st.runStrategy
		vm.Spec.RunStrategy = &s
	}
	vm.Spec.Running = st.running
	created, err := c.KubevirtV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create VM %s: %v", name, err)
	}
	if len(st.pending) > 0 {
		for _, a := range st.pending {
			created.Status.StateChangeRequests = append(created.Status.StateChangeRequests,
				kubevirtv1.VirtualMachineStateChangeRequest{Action: a})
		}
		if _, err := c.KubevirtV1().VirtualMachines(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("VM %s status: %v", name, err)
		}
	}
	if st.vmiPhase == "" {
		return nil
	}
	return makeVMI(t, c, name, st.vmiPhase, st.paused)
}

// makeVMI creates an instance on node-1 in the given phase.
func makeVMI(t *testing.T, c clientset.Interface, name string, phase kubevirtv1.VirtualMachineInstancePhase, paused bool) *kubevirtv1.VirtualMachineInstance {
	t.Helper()
	return makeVMIOn(t, c, name, "node-1", phase, paused)
}

// makeVMIOn creates an instance on the given node in the given phase.
func makeVMIOn(t *testing.T, c clientset.Interface, name, node string, phase kubevirtv1.VirtualMachineInstancePhase, paused bool) *kubevirtv1.VirtualMachineInstance {
	t.Helper()
	ctx := context.Background()
	vmi := &kubevirtv1.VirtualMachineInstance{}
	if err := yaml.Unmarshal([]byte(framework.VMIYAML(name)), vmi); err != nil {
		t.Fatal(err)
	}
	vmi.Namespace = ns
	created, err := c.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create VMI %s: %v", name, err)
	}
	created.Status.Phase = phase
	created.Status.NodeName = node
	if paused {
		created.Status.Conditions = append(created.Status.Conditions, kubevirtv1.VirtualMachineInstanceCondition{
			Type: kubevirtv1.VirtualMachineInstancePaused, Status: corev1.ConditionTrue})
	}
	updated, err := c.KubevirtV1().VirtualMachineInstances(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("VMI %s status: %v", name, err)
	}
	return updated
}
