package v1_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/apitesting"
	v1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/generated/openapi"
)

// typeConverter builds the structured-merge-diff converter the API server
// uses for managed fields and server-side apply, from our generated OpenAPI.
func typeConverter(t *testing.T) managedfields.TypeConverter {
	t.Helper()
	name := func(n string) string {
		if strings.Contains(n, "/") {
			return util.ToRESTFriendlyName(n)
		}
		return n
	}
	defs := openapi.GetOpenAPIDefinitions(func(n string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + name(n))
	})
	schemas := make(map[string]*spec.Schema, len(defs))
	for n, def := range defs {
		s := def.Schema
		schemas[name(n)] = &s
	}
	for _, obj := range kinds() {
		kind := typeName(obj)
		s := schemas[obj.(interface{ OpenAPIModelName() string }).OpenAPIModelName()]
		if s == nil {
			t.Fatalf("no OpenAPI definition for %s", kind)
		}
		s.Extensions = spec.Extensions{"x-kubernetes-group-version-kind": []any{
			map[string]any{"group": v1.GroupName, "version": "v1", "kind": kind},
		}}
	}
	tc, err := managedfields.NewTypeConverter(schemas, false)
	if err != nil {
		t.Fatalf("building the type converter: %v", err)
	}
	return tc
}

func kinds() []runtime.Object {
	return []runtime.Object{
		&v1.VirtualMachine{}, &v1.VirtualMachineInstance{},
		&v1.VirtualMachineInstanceReplicaSet{}, &v1.VirtualMachineInstanceMigration{},
	}
}

func typeName(obj runtime.Object) string {
	switch obj.(type) {
	case *v1.VirtualMachine:
		return "VirtualMachine"
	case *v1.VirtualMachineInstance:
		return "VirtualMachineInstance"
	case *v1.VirtualMachineInstanceReplicaSet:
		return "VirtualMachineInstanceReplicaSet"
	case *v1.VirtualMachineInstanceMigration:
		return "VirtualMachineInstanceMigration"
	}
	return ""
}

// TestManagedFieldsAcceptEveryField converts completely filled objects to
// structured-merge-diff's typed values, as the API server does on every
// write. This fails on types it cannot handle (unsigned integers) and on
// list map keys that do not fit the schema.
func TestManagedFieldsAcceptEveryField(t *testing.T) {
	tc := typeConverter(t)
	for _, zero := range []bool{false, true} {
		mode := map[bool]string{false: "non-zero", true: "zero-leaves"}[zero]
		for _, proto := range kinds() {
			obj := proto.DeepCopyObject()
			(&apitesting.Filler{ZeroLeaves: zero}).Fill(obj)
			obj.GetObjectKind().SetGroupVersionKind(v1.SchemeGroupVersion.WithKind(typeName(obj)))
			t.Run(mode+"/"+typeName(obj), func(t *testing.T) {
				typed, err := tc.ObjectToTyped(obj)
				if err != nil {
					t.Fatalf("ObjectToTyped: %v", err)
				}
				if _, err := typed.ToFieldSet(); err != nil {
					t.Fatalf("ToFieldSet: %v", err)
				}
			})
		}
	}
}

// TestNamedListsAreAssociative checks that disks, volumes, interfaces and
// networks merge by name under server-side apply instead of being replaced.
func TestNamedListsAreAssociative(t *testing.T) {
	tc := typeConverter(t)
	vmi := &v1.VirtualMachineInstance{}
	vmi.SetGroupVersionKind(v1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))
	vmi.Spec.Domain.Devices.Disks = []v1.Disk{{Name: "a"}, {Name: "b"}}
	vmi.Spec.Domain.Devices.Interfaces = []v1.Interface{{Name: "a"}}
	vmi.Spec.Volumes = []v1.Volume{{Name: "a"}}
	vmi.Spec.Networks = []v1.Network{{Name: "a"}}
	typed, err := tc.ObjectToTyped(vmi)
	if err != nil {
		t.Fatal(err)
	}
	set, err := typed.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	fields := set.String()
	for _, want := range []string{
		`.spec.domain.devices.disks[name="a"]`,
		`.spec.domain.devices.disks[name="b"]`,
		`.spec.domain.devices.interfaces[name="a"]`,
		`.spec.volumes[name="a"]`,
		`.spec.networks[name="a"]`,
	} {
		if !strings.Contains(fields, want) {
			t.Errorf("field set lacks %s; got:\n%s", want, fields)
		}
	}
}
