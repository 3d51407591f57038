package validation

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// summarize maps each error to "Type:field", e.g. "Forbidden:spec.domain.devices.gpus", sorted,
// so that tests assert both the error type and the path.
func summarize(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, strings.TrimPrefix(string(e.Type), "FieldValue")+":"+e.Field)
	}
	sort.Strings(out)
	return out
}

// wantErrs sorts an expectation like summarize does.
func wantErrs(want ...string) []string {
	if len(want) == 0 {
		return nil
	}
	out := append([]string(nil), want...)
	sort.Strings(out)
	return out
}

// compareErrs fails t when errs does not summarize to want.
func compareErrs(t *testing.T, want []string, errs field.ErrorList) {
	t.Helper()
	if diff := cmp.Diff(wantErrs(want...), summarize(errs), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("errors differ (-want +got):\n%s\nfull errors: %v", diff, errs)
	}
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func qp(s string) *resource.Quantity {
	v := resource.MustParse(s)
	return &v
}

func ptr[T any](v T) *T { return &v }

// validSpec returns a complete, valid instance spec: 128Mi of memory, a container disk, a
// cloud-init disk, and the pod network through masquerade.
func validSpec() *kubevirtv1.VirtualMachineInstanceSpec {
	return &kubevirtv1.VirtualMachineInstanceSpec{
		Domain: kubevirtv1.DomainSpec{
			Resources: kubevirtv1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceMemory: q("128Mi")},
			},
			Devices: kubevirtv1.Devices{
				Disks: []kubevirtv1.Disk{
					{Name: "rootdisk", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}},
					{Name: "cloudinit", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}},
				},
				Interfaces: []kubevirtv1.Interface{{
					Name:                   "default",
					InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}},
				}},
			},
		},
		Volumes: []kubevirtv1.Volume{
			{Name: "rootdisk", VolumeSource: kubevirtv1.VolumeSource{
				ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: "quay.io/containerdisks/fedora:latest"}}},
			{Name: "cloudinit", VolumeSource: kubevirtv1.VolumeSource{
				CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
		},
		Networks: []kubevirtv1.Network{{Name: "default", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}}},
	}
}

// validVMI returns a valid instance named vm1.
func validVMI() *kubevirtv1.VirtualMachineInstance {
	return &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "default"},
		Spec:       *validSpec(),
	}
}

// validVM returns a valid VirtualMachine named vm1 with runStrategy Always.
func validVM() *kubevirtv1.VirtualMachine {
	return &kubevirtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "default"},
		Spec: kubevirtv1.VirtualMachineSpec{
			RunStrategy: ptr(kubevirtv1.RunStrategyAlways),
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kubevirt.io/vm": "vm1"}},
				Spec:       *validSpec(),
			},
		},
	}
}

// specCase mutates a valid spec and lists the errors expected, with spec at "spec".
type specCase struct {
	name   string
	mutate func(s *kubevirtv1.VirtualMachineInstanceSpec)
	want   []string
}

// runSpecCases runs ValidateVMISpec over each case.
func runSpecCases(t *testing.T, cases []specCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := validSpec()
			tc.mutate(spec)
			compareErrs(t, tc.want, ValidateVMISpec(spec, field.NewPath("spec")))
		})
	}
}

func TestValidSpecIsValid(t *testing.T) {
	compareErrs(t, nil, ValidateVMISpec(validSpec(), field.NewPath("spec")))
	compareErrs(t, nil, ValidateVirtualMachineInstance(validVMI()))
	compareErrs(t, nil, ValidateVirtualMachine(validVM()))
}

// TestDefaultedObjectsStayValid checks that the API server's defaults never make a valid
// object invalid, also for a minimal object that relies on them for its networking.
func TestDefaultedObjectsStayValid(t *testing.T) {
	minimal := &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "tiny"},
		Spec: kubevirtv1.VirtualMachineInstanceSpec{
			Domain: kubevirtv1.DomainSpec{Memory: &kubevirtv1.Memory{Guest: qp("64Mi")}},
		},
	}
	for name, vmi := range map[string]*kubevirtv1.VirtualMachineInstance{"full": validVMI(), "minimal": minimal} {
		t.Run(name, func(t *testing.T) {
			kubevirtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
			compareErrs(t, nil, ValidateVirtualMachineInstance(vmi))
		})
	}
	if len(minimal.Spec.Networks) != 1 || len(minimal.Spec.Domain.Devices.Interfaces) != 1 {
		t.Errorf("defaults did not add the pod network: %+v", minimal.Spec)
	}
	vm := validVM()
	kubevirtv1.SetObjectDefaults_VirtualMachine(vm)
	compareErrs(t, nil, ValidateVirtualMachine(vm))
}
