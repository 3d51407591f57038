package v1_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/utils/ptr"

	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/install"
	v1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// strictYAML decodes YAML the way the API server does with
// fieldValidation=Strict: unknown and duplicate fields are errors.
func strictYAML(t *testing.T) (runtime.Decoder, *runtime.Scheme) {
	t.Helper()
	scheme := runtime.NewScheme()
	install.Install(scheme)
	return json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme,
		json.SerializerOptions{Yaml: true, Strict: true}), scheme
}

// TestSeedManifestDecodesStrictly decodes the v1alpha3 vm-cirros example of
// the seed document.
func TestSeedManifestDecodesStrictly(t *testing.T) {
	data, err := os.ReadFile("testdata/vm-cirros-v1alpha3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	decoder, _ := strictYAML(t)
	obj, gvk, err := decoder.Decode(data, nil, nil)
	if err != nil {
		t.Fatalf("strict decode: %v", err)
	}
	if want := (schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1alpha3", Kind: "VirtualMachine"}); *gvk != want {
		t.Errorf("kind = %v, want %v", *gvk, want)
	}
	labels := map[string]string{"kubevirt.io/vm": "vm-cirros"}
	want := &v1.VirtualMachine{
		TypeMeta:   metav1.TypeMeta{APIVersion: "kubevirt.io/v1alpha3", Kind: "VirtualMachine"},
		ObjectMeta: metav1.ObjectMeta{Name: "vm-cirros", Labels: labels},
		Spec: v1.VirtualMachineSpec{
			Running: ptr.To(false),
			Template: &v1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.VirtualMachineInstanceSpec{
					Domain: v1.DomainSpec{
						Devices: v1.Devices{Disks: []v1.Disk{
							{Name: "containerdisk", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}},
							{Name: "cloudinitdisk", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}},
						}},
						Machine: &v1.Machine{Type: ""},
						Resources: v1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64M")},
						},
					},
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Volumes: []v1.Volume{
						{Name: "containerdisk", VolumeSource: v1.VolumeSource{
							ContainerDisk: &v1.ContainerDiskSource{Image: "kubevirt/cirros-container-disk-demo:latest"},
						}},
						{Name: "cloudinitdisk", VolumeSource: v1.VolumeSource{
							CloudInitNoCloud: &v1.CloudInitNoCloudSource{
								UserDataBase64: "IyEvYmluL3NoCgplY2hvICdwcmludGVkIGZyb20gY2xvdWQtaW5pdCB1c2VyZGF0YScK",
							},
						}},
					},
				},
			},
		},
	}
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("decoded seed manifest (-want +got):\n%s", diff)
	}
}

func TestStrictDecodingRejectsUnknownFields(t *testing.T) {
	data, err := os.ReadFile("testdata/vm-cirros-v1alpha3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seed := string(data)
	tests := []struct {
		name    string
		yaml    string
		wantErr string
	}{
		{name: "seed as is", yaml: seed},
		{
			name:    "unknown disk field",
			yaml:    strings.Replace(seed, "            name: containerdisk", "            name: containerdisk\n            sizeGiB: 3", 1),
			wantErr: `unknown field "spec.template.spec.domain.devices.disks[0].sizeGiB"`,
		},
		{
			name:    "misspelt run strategy",
			yaml:    strings.Replace(seed, "  running: false", "  runstrategy: Always", 1),
			wantErr: `unknown field "spec.runstrategy"`,
		},
	}
	decoder, _ := strictYAML(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decoder.Decode([]byte(tt.yaml), nil, nil)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestSeedManifestDefaults checks what the API server's defaulting adds to
// the seed manifest.
func TestSeedManifestDefaults(t *testing.T) {
	data, err := os.ReadFile("testdata/vm-cirros-v1alpha3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	decoder, scheme := strictYAML(t)
	obj, _, err := decoder.Decode(data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	scheme.Default(obj)
	spec := obj.(*v1.VirtualMachine).Spec.Template.Spec
	if diff := cmp.Diff(&v1.Machine{Type: "q35"}, spec.Domain.Machine); diff != "" {
		t.Errorf("machine (-want +got):\n%s", diff)
	}
	wantNetworks := []v1.Network{{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}}
	if diff := cmp.Diff(wantNetworks, spec.Networks); diff != "" {
		t.Errorf("networks (-want +got):\n%s", diff)
	}
	wantInterfaces := []v1.Interface{{
		Name:                   "default",
		InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}},
	}}
	if diff := cmp.Diff(wantInterfaces, spec.Domain.Devices.Interfaces); diff != "" {
		t.Errorf("interfaces (-want +got):\n%s", diff)
	}
}
