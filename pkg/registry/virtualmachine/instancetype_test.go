package virtualmachine

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/instancetype/revision"
)

// getters serve one cluster instance type (u1.small: 2 vCPUs, 256Mi) and one namespaced
// preference (fedora in ns); fail makes every read fail otherwise than NotFound.
func getters(fail error) revision.Getters {
	return revision.Getters{
		Instancetype: func(_ context.Context, _, name string) (*instancetypev1beta1.VirtualMachineInstancetype, error) {
			return nil, apierrors.NewNotFound(instancetypev1beta1.Resource("virtualmachineinstancetypes"), name)
		},
		ClusterInstancetype: func(_ context.Context, name string) (*instancetypev1beta1.VirtualMachineClusterInstancetype, error) {
			if fail != nil {
				return nil, fail
			}
			if name != "u1.small" {
				return nil, apierrors.NewNotFound(instancetypev1beta1.Resource("virtualmachineclusterinstancetypes"), name)
			}
			return &instancetypev1beta1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: instancetypev1beta1.VirtualMachineInstancetypeSpec{
					CPU:    instancetypev1beta1.CPUInstancetype{Guest: 2},
					Memory: instancetypev1beta1.MemoryInstancetype{Guest: resource.MustParse("256Mi")},
				}}, nil
		},
		Preference: func(_ context.Context, ns, name string) (*instancetypev1beta1.VirtualMachinePreference, error) {
			if ns != "ns" || name != "fedora" {
				return nil, apierrors.NewNotFound(instancetypev1beta1.Resource("virtualmachinepreferences"), name)
			}
			return &instancetypev1beta1.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: instancetypev1beta1.VirtualMachinePreferenceSpec{
					Devices: &instancetypev1beta1.DevicePreferences{PreferredDiskBus: "nvme"},
				}}, nil
		},
		ClusterPreference: func(_ context.Context, name string) (*instancetypev1beta1.VirtualMachineClusterPreference, error) {
			return nil, apierrors.NewNotFound(instancetypev1beta1.Resource("virtualmachineclusterpreferences"), name)
		},
		Revision: func(_ context.Context, _, name string) (*appsv1.ControllerRevision, error) {
			return nil, apierrors.NewNotFound(appsv1.Resource("controllerrevisions"), name)
		},
	}
}

// sizedVM has no CPU or memory of its own and a disk without a bus.
func sizedVM() *kubevirtv1.VirtualMachine {
	return &kubevirtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "ns"},
		Spec: kubevirtv1.VirtualMachineSpec{
			Instancetype: &kubevirtv1.InstancetypeMatcher{Name: "u1.small", Kind: "virtualmachineclusterinstancetype"},
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{Spec: kubevirtv1.VirtualMachineInstanceSpec{
				Domain: kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{
					Disks: []kubevirtv1.Disk{{Name: "root", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{}}}},
				}},
				Volumes: []kubevirtv1.Volume{{Name: "root", VolumeSource: kubevirtv1.VolumeSource{
					ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: "quay.io/containerdisks/fedora:latest"}}}},
			}},
		},
	}
}

func errFields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	sort.Strings(out)
	return out
}

func TestCheckInstancetype(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(vm *kubevirtv1.VirtualMachine)
		want   []string
	}{
		{"the instance type completes the template", func(*kubevirtv1.VirtualMachine) {}, nil},
		{"with a preference", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "fedora", Kind: "VirtualMachinePreference"}
		}, []string{
			// The preference fills the bus, and the completed template is validated: NativeVirt
			// has no nvme bus.
			"FieldValueNotSupported spec.template.spec.domain.devices.disks[0].disk.bus",
		}},
		{"conflicts name the template's fields", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Template.Spec.Domain.CPU = &kubevirtv1.CPU{Sockets: 1, Cores: 2}
			vm.Spec.Template.Spec.Domain.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		}, []string{
			"FieldValueInvalid spec.template.spec.domain.cpu.cores",
			"FieldValueInvalid spec.template.spec.domain.cpu.sockets",
			"FieldValueInvalid spec.template.spec.domain.resources.requests.memory",
		}},
		{"a missing instance type", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Instancetype.Name = "u1.huge"
		}, []string{"FieldValueNotFound spec.instancetype"}},
		{"a missing preference", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "windows", Kind: "virtualmachinepreference"}
		}, []string{"FieldValueNotFound spec.preference"}},
		{"a preference alone: the template's own memory is then required", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Instancetype = nil
			vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "fedora", Kind: "VirtualMachinePreference"}
			vm.Spec.Template.Spec.Domain.Devices.Disks[0].Disk.Bus = kubevirtv1.DiskBusVirtio
		}, []string{"FieldValueRequired spec.template.spec.domain.resources.requests[memory]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vm := sizedVM()
			tc.mutate(vm)
			errs, err := CheckInstancetype(context.Background(), getters(nil), vm)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, errFields(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestCheckInstancetypeMessagesAndFailures(t *testing.T) {
	vm := sizedVM()
	vm.Spec.Instancetype.Name = "u1.huge"
	errs, err := CheckInstancetype(context.Background(), getters(nil), vm)
	if err != nil || len(errs) != 1 || !strings.Contains(errs[0].Error(), "Failure to find instancetype") {
		t.Errorf("missing instance type: %v, %v; want KubeVirt's \"Failure to find instancetype\"", errs, err)
	}

	// A failure to read is the server's, not the VM's fault: no field error.
	boom := errors.New("etcd is gone")
	if errs, err := CheckInstancetype(context.Background(), getters(boom), sizedVM()); !apierrors.IsInternalError(err) ||
		!strings.Contains(err.Error(), boom.Error()) || errs != nil {
		t.Errorf("read failure: %v, %v; want a 500 carrying it", errs, err)
	}
	forbidden := apierrors.NewForbidden(appsv1.Resource("controllerrevisions"), "r", errors.New("no"))
	if _, err := CheckInstancetype(context.Background(), getters(forbidden), sizedVM()); !apierrors.IsInternalError(err) {
		t.Errorf("a 403 of the server's own read: %v; want a 500, not the 403", err)
	}

	// Nothing named: nothing read.
	plain := sizedVM()
	plain.Spec.Instancetype = nil
	if errs, err := CheckInstancetype(context.Background(), revision.Getters{}, plain); errs != nil || err != nil {
		t.Errorf("without matchers: %v, %v", errs, err)
	}
}
