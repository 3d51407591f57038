package integration

import (
	"context"
	"strings"
	"testing"

	kubefake "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apiserver/app"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// virtctlVM is a VM manifest as upstream `virtctl create vm` prints it (pkg/virtctl/create/vm:
// runStrategy Always, a 180s grace period, 512Mi of guest memory, yaml.Marshal's empty structs
// and null creationTimestamps) with the given dataVolumeTemplates, volumes and extra spec.
func virtctlVM(name, templates, volumes, extra string) string {
	return `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  creationTimestamp: null
  name: ` + name + `
spec:
  dataVolumeTemplates:
` + templates + extra + `  runStrategy: Always
  template:
    metadata:
      creationTimestamp: null
    spec:
      domain:
        devices: {}
        memory:
          guest: 512Mi
        resources: {}
      terminationGracePeriodSeconds: 180
      volumes:
` + volumes + `status: {}
`
}

// dvVolume is the volume virtctl adds for an imported volume.
func dvVolume(name string) string {
	return "      - dataVolume:\n          name: " + name + "\n        name: " + name + "\n"
}

// inferIgnore is the implicit inference virtctl adds when the first volume may name an instance
// type (a pvc, registry or DataSource source).
func inferIgnore(volume string) string {
	return `  instancetype:
    inferFromVolume: ` + volume + `
    inferFromVolumeFailurePolicy: Ignore
  preference:
    inferFromVolume: ` + volume + `
    inferFromVolumeFailurePolicy: Ignore
`
}

// TestVirtctlCreateVMVolumeImport: the manifests of `virtctl create vm --volume-import
// type:ds|pvc|http|registry|blank,…` are accepted under strict field validation (what kubectl
// sends) and stored with their DataVolume templates; the implicit inference, which NativeVirt
// cannot do from a DataVolume, is dropped (policy Ignore) and the guest memory kept.
func TestVirtctlCreateVMVolumeImport(t *testing.T) {
	// With a Kubernetes client, as deployed: the server may infer (here it finds nothing to).
	srv := framework.StartWithOptions(t, "", func(o *app.Options) { o.KubeClient = kubefake.NewSimpleClientset() })
	client := srv.Clientset(t)
	cases := []struct {
		name, manifest string
		check          func(t *testing.T, vm *kubevirtv1.VirtualMachine)
	}{
		{"ds with namespace and size", virtctlVM("vi-ds", `  - metadata:
      creationTimestamp: null
      name: imported-volume-abcde
    spec:
      sourceRef:
        kind: DataSource
        name: fedora
        namespace: `+ns+`
      storage:
        resources:
          requests:
            storage: 10Gi
`, dvVolume("imported-volume-abcde"), inferIgnore("imported-volume-abcde")), func(t *testing.T, vm *kubevirtv1.VirtualMachine) {
			ref := vm.Spec.DataVolumeTemplates[0].Spec.SourceRef
			if ref == nil || ref.Kind != "DataSource" || ref.Name != "fedora" || ref.Namespace == nil || *ref.Namespace != ns {
				t.Errorf("sourceRef %+v", ref)
			}
		}},
		{"ds without namespace or size", virtctlVM("vi-ds-short", `  - metadata:
      creationTimestamp: null
      name: root
    spec:
      sourceRef:
        kind: DataSource
        name: fedora
      storage:
        resources: {}
`, dvVolume("root"), inferIgnore("root")), func(t *testing.T, vm *kubevirtv1.VirtualMachine) {
			if vm.Spec.DataVolumeTemplates[0].Spec.Storage == nil {
				t.Error("storage dropped")
			}
		}},
		{"pvc clone", virtctlVM("vi-pvc", `  - metadata:
      creationTimestamp: null
      name: cloned
    spec:
      source:
        pvc:
          name: golden
          namespace: `+ns+`
      storage:
        resources: {}
`, dvVolume("cloned"), inferIgnore("cloned")), func(t *testing.T, vm *kubevirtv1.VirtualMachine) {
			if p := vm.Spec.DataVolumeTemplates[0].Spec.Source.PVC; p == nil || p.Name != "golden" {
				t.Errorf("source.pvc %+v", p)
			}
		}},
		{"http with size, and a blank volume", virtctlVM("vi-http", `  - metadata:
      creationTimestamp: null
      name: imported
    spec:
      source:
        http:
          url: http://images.example/fedora.qcow2
      storage:
        resources:
          requests:
            storage: 5Gi
  - metadata:
      creationTimestamp: null
      name: scratch
    spec:
      source:
        blank: {}
      storage:
        resources:
          requests:
            storage: 1Gi
`, dvVolume("imported")+dvVolume("scratch"), ""), func(t *testing.T, vm *kubevirtv1.VirtualMachine) {
			if len(vm.Spec.DataVolumeTemplates) != 2 || vm.Spec.DataVolumeTemplates[1].Spec.Source.Blank == nil {
				t.Errorf("templates %+v", vm.Spec.DataVolumeTemplates)
			}
		}},
		{"registry pullMethod node", virtctlVM("vi-registry", `  - metadata:
      creationTimestamp: null
      name: fromregistry
    spec:
      source:
        registry:
          pullMethod: node
          url: docker://quay.io/containerdisks/fedora:latest
      storage:
        resources:
          requests:
            storage: 5Gi
`, dvVolume("fromregistry"), inferIgnore("fromregistry")), func(t *testing.T, vm *kubevirtv1.VirtualMachine) {
			if r := vm.Spec.DataVolumeTemplates[0].Spec.Source.Registry; r == nil || r.URL == nil || !strings.HasPrefix(*r.URL, "docker://") {
				t.Errorf("source.registry %+v", r)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, err := yaml.YAMLToJSON([]byte(c.manifest))
			if err != nil {
				t.Fatal(err)
			}
			vm := &kubevirtv1.VirtualMachine{}
			err = client.KubevirtV1().RESTClient().Post().Namespace(ns).Resource("virtualmachines").
				Param("fieldValidation", "Strict").SetHeader("Content-Type", "application/json").
				Body(body).Do(context.Background()).Into(vm)
			if err != nil {
				t.Fatalf("create: %v\n%s", err, c.manifest)
			}
			if vm.Spec.Instancetype != nil || vm.Spec.Preference != nil {
				t.Errorf("matchers %+v %+v, want dropped (inference from a DataVolume fails, policy Ignore)", vm.Spec.Instancetype, vm.Spec.Preference)
			}
			if m := vm.Spec.Template.Spec.Domain.Memory; m == nil || m.Guest == nil || m.Guest.String() != "512Mi" {
				t.Errorf("memory %+v, want guest 512Mi kept", m)
			}
			if len(vm.Spec.DataVolumeTemplates) == 0 || vm.Spec.Template.Spec.Volumes[0].DataVolume == nil {
				t.Fatalf("stored spec %+v", vm.Spec)
			}
			c.check(t, vm)
		})
	}
}
