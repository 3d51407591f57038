package integration

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// TestMultusAdmission: VMs with bridge interfaces on Multus networks are admitted as KubeVirt
// admits them; bridge on the pod network, masquerade on a Multus network and a bad networkName
// get 422 naming the field.
func TestMultusAdmission(t *testing.T) {
	srv := framework.Start(t, "")
	kv, err := versioned.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	vmWith := func(name string, mutate func(spec *kubevirtv1.VirtualMachineInstanceSpec)) *kubevirtv1.VirtualMachine {
		vm := &kubevirtv1.VirtualMachine{}
		if err := yaml.Unmarshal([]byte(framework.VMYAML(name)), vm); err != nil {
			t.Fatal(err)
		}
		mutate(&vm.Spec.Template.Spec)
		return vm
	}
	secondary := func(networkName string, binding kubevirtv1.InterfaceBindingMethod) func(spec *kubevirtv1.VirtualMachineInstanceSpec) {
		return func(spec *kubevirtv1.VirtualMachineInstanceSpec) {
			spec.Networks = append(spec.Networks, kubevirtv1.Network{Name: "blue",
				NetworkSource: kubevirtv1.NetworkSource{Multus: &kubevirtv1.MultusNetwork{NetworkName: networkName}}})
			spec.Domain.Devices.Interfaces = append(spec.Domain.Devices.Interfaces, kubevirtv1.Interface{Name: "blue",
				MacAddress: "02:00:00:00:00:0b", InterfaceBindingMethod: binding})
		}
	}
	bridge := kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}

	created, err := kv.KubevirtV1().VirtualMachines("default").Create(ctx, vmWith("multus-ok", secondary("other/blue-net", bridge)), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a bridge interface on a Multus network is refused: %v", err)
	}
	nets := created.Spec.Template.Spec.Networks
	if len(nets) != 2 || nets[1].Multus == nil || nets[1].Multus.NetworkName != "other/blue-net" {
		t.Errorf("stored networks %+v", nets)
	}

	for _, tc := range []struct {
		name, field string
		mutate      func(spec *kubevirtv1.VirtualMachineInstanceSpec)
	}{
		{"bridge-on-pod", "interfaces[0].bridge", func(spec *kubevirtv1.VirtualMachineInstanceSpec) {
			spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = bridge
		}},
		{"masquerade-on-multus", "interfaces[1].masquerade",
			secondary("blue-net", kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}})},
		{"bad-network-name", "networks[1].multus.networkName", secondary("a/b/c", bridge)},
		{"sriov", "interfaces[1].sriov", secondary("blue-net", kubevirtv1.InterfaceBindingMethod{SRIOV: &kubevirtv1.InterfaceSRIOV{}})},
	} {
		_, err := kv.KubevirtV1().VirtualMachines("default").Create(ctx, vmWith(tc.name, tc.mutate), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: got %v, want 422 naming %s", tc.name, err, tc.field)
		}
	}
}
