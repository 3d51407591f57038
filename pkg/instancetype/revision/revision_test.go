package revision

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func testVM() *kubevirtv1.VirtualMachine {
	return &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "ns", UID: "vm-uid"}}
}

func clusterInstancetype(guest int32) *instancetypev1beta1.VirtualMachineClusterInstancetype {
	return &instancetypev1beta1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "u1.small", UID: "it-uid", Generation: 3,
			Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}, Finalizers: []string{"f"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: instancetypev1beta1.VirtualMachineInstancetypeSpec{
			CPU:    instancetypev1beta1.CPUInstancetype{Guest: guest},
			Memory: instancetypev1beta1.MemoryInstancetype{Guest: resource.MustParse("256Mi")},
		},
	}
}

func TestNewAndDecode(t *testing.T) {
	vm := testVM()
	obj := clusterInstancetype(2)
	rev, err := New(vm, obj)
	if err != nil {
		t.Fatal(err)
	}
	if want := "vm1-u1.small-v1beta1-it-uid-3"; rev.Name != want {
		t.Errorf("name %q, want %q", rev.Name, want)
	}
	if rev.Namespace != "ns" {
		t.Errorf("namespace %q", rev.Namespace)
	}
	if ref := metav1.GetControllerOf(rev); ref == nil || ref.UID != "vm-uid" || ref.Kind != "VirtualMachine" || ref.APIVersion != "kubevirt.io/v1" {
		t.Errorf("owner %+v", ref)
	}
	wantLabels := map[string]string{ObjectNameLabel: "u1.small", ObjectKindLabel: "VirtualMachineClusterInstancetype",
		ObjectUIDLabel: "it-uid", ObjectGenerationLabel: "3", ObjectVersionLabel: "v1beta1"}
	for k, v := range wantLabels {
		if rev.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, rev.Labels[k], v)
		}
	}
	if obj.Labels["a"] != "b" || len(obj.ManagedFields) != 1 {
		t.Error("New changed the object it copied")
	}
	for _, stripped := range []string{`"labels"`, `"annotations"`, `"finalizers"`, `"managedFields"`} {
		if strings.Contains(string(rev.Data.Raw), stripped) {
			t.Errorf("revision data keeps %s: %s", stripped, rev.Data.Raw)
		}
	}
	d, err := Decode(rev)
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != instancetypev1beta1.ClusterInstancetypeKind || d.Instancetype == nil || d.Preference != nil {
		t.Fatalf("decoded %+v", d)
	}
	if d.Instancetype.CPU.Guest != 2 || d.Instancetype.Memory.Guest.String() != "256Mi" {
		t.Errorf("decoded spec %+v", d.Instancetype)
	}

	again, _ := New(vm, clusterInstancetype(2))
	if same, err := SameData(rev, again); err != nil || !same {
		t.Errorf("same object: SameData = %v, %v", same, err)
	}
	other, _ := New(vm, clusterInstancetype(4))
	if same, err := SameData(rev, other); err != nil || same {
		t.Errorf("other object: SameData = %v, %v", same, err)
	}
}

func TestDecodeRefusesOtherVersionsAndKinds(t *testing.T) {
	for name, raw := range map[string]string{
		"v1alpha2":     `{"apiVersion":"instancetype.kubevirt.io/v1alpha2","kind":"VirtualMachineInstancetype","spec":{}}`,
		"unknown kind": `{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"Pod","spec":{}}`,
		"not json":     `{`,
	} {
		rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Data: runtime.RawExtension{Raw: []byte(raw)}}
		if _, err := Decode(rev); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := Decode(&appsv1.ControllerRevision{}); err == nil {
		t.Error("empty revision decoded")
	}
}

func TestKinds(t *testing.T) {
	for in, want := range map[string]string{
		"":                                   "VirtualMachineClusterInstancetype",
		"VirtualMachineInstancetype":         "VirtualMachineInstancetype",
		"virtualmachineinstancetypes":        "VirtualMachineInstancetype",
		"VirtualMachineClusterInstancetype":  "VirtualMachineClusterInstancetype",
		"virtualmachineclusterinstancetypes": "VirtualMachineClusterInstancetype",
	} {
		got, err := InstancetypeKind(&kubevirtv1.InstancetypeMatcher{Kind: in})
		if err != nil || got != want {
			t.Errorf("InstancetypeKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":                                "VirtualMachineClusterPreference",
		"VirtualMachinePreference":        "VirtualMachinePreference",
		"virtualmachineclusterpreference": "VirtualMachineClusterPreference",
	} {
		got, err := PreferenceKind(&kubevirtv1.PreferenceMatcher{Kind: in})
		if err != nil || got != want {
			t.Errorf("PreferenceKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := InstancetypeKind(&kubevirtv1.InstancetypeMatcher{Kind: "VirtualMachinePreference"}); err == nil {
		t.Error("a preference kind accepted for an instance type")
	}
}

// fakeGetters serves one cluster instance type, one namespaced preference and revisions.
func fakeGetters(revs map[string]*appsv1.ControllerRevision) Getters {
	notFound := func(res, name string) error {
		return apierrors.NewNotFound(instancetypev1beta1.Resource(res), name)
	}
	return Getters{
		Instancetype: func(_ context.Context, _, name string) (*instancetypev1beta1.VirtualMachineInstancetype, error) {
			return nil, notFound("virtualmachineinstancetypes", name)
		},
		ClusterInstancetype: func(_ context.Context, name string) (*instancetypev1beta1.VirtualMachineClusterInstancetype, error) {
			if name == "u1.small" {
				return clusterInstancetype(1), nil
			}
			return nil, notFound("virtualmachineclusterinstancetypes", name)
		},
		Preference: func(_ context.Context, ns, name string) (*instancetypev1beta1.VirtualMachinePreference, error) {
			if ns == "ns" && name == "fast" {
				topo := instancetypev1beta1.Cores
				return &instancetypev1beta1.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
					Spec: instancetypev1beta1.VirtualMachinePreferenceSpec{CPU: &instancetypev1beta1.CPUPreferences{PreferredCPUTopology: &topo}}}, nil
			}
			return nil, notFound("virtualmachinepreferences", name)
		},
		ClusterPreference: func(_ context.Context, name string) (*instancetypev1beta1.VirtualMachineClusterPreference, error) {
			return nil, notFound("virtualmachineclusterpreferences", name)
		},
		Revision: func(_ context.Context, _, name string) (*appsv1.ControllerRevision, error) {
			if r, ok := revs[name]; ok {
				return r, nil
			}
			return nil, apierrors.NewNotFound(appsv1.Resource("controllerrevisions"), name)
		},
	}
}

func TestSpecs(t *testing.T) {
	vm := testVM()
	stored, _ := New(vm, clusterInstancetype(4)) // the instance type as it was: 4 vCPUs
	g := fakeGetters(map[string]*appsv1.ControllerRevision{stored.Name: stored})
	ctx := context.Background()

	vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "u1.small"}
	vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "fast", Kind: "VirtualMachinePreference"}
	it, pref, err := g.Specs(ctx, vm)
	if err != nil {
		t.Fatal(err)
	}
	if it.CPU.Guest != 1 || pref == nil || *pref.CPU.PreferredCPUTopology != instancetypev1beta1.Cores {
		t.Errorf("without revisions: the objects themselves, got %+v %+v", it, pref)
	}

	vm.Status.InstancetypeRef = &kubevirtv1.InstancetypeStatusRef{Name: "u1.small", Kind: "VirtualMachineClusterInstancetype",
		ControllerRevisionRef: &kubevirtv1.ControllerRevisionRef{Name: stored.Name}}
	if it, _, err = g.Specs(ctx, vm); err != nil || it.CPU.Guest != 4 {
		t.Errorf("with a recorded revision: want its 4 vCPUs, got %+v, %v", it, err)
	}

	vm.Spec.Instancetype.Name = "u1.large" // the reference records another object: not used
	_, _, err = g.Specs(ctx, vm)
	var lookup *LookupError
	if !errors.As(err, &lookup) || lookup.Field.String() != "spec.instancetype" || !apierrors.IsNotFound(err) {
		t.Errorf("missing instance type: got %v", err)
	}

	vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "u1.small", RevisionName: "gone"}
	if _, _, err = g.Specs(ctx, vm); !errors.As(err, &lookup) || lookup.Field.String() != "spec.instancetype.revisionName" {
		t.Errorf("pinned revision missing: got %v", err)
	}

	vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "u1.small", Kind: "Pod"}
	if _, _, err = g.Specs(ctx, vm); !errors.As(err, &lookup) || lookup.Field.String() != "spec.instancetype.kind" {
		t.Errorf("bad kind: got %v", err)
	}

	noRevisions := g
	noRevisions.Revision = nil
	vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "u1.small"}
	if it, _, err = noRevisions.Specs(ctx, vm); err != nil || it.CPU.Guest != 1 {
		t.Errorf("without a revision reader: want the object, got %+v, %v", it, err)
	}
}

func TestMatches(t *testing.T) {
	ref := func(name, kind, rev string) *kubevirtv1.InstancetypeStatusRef {
		return &kubevirtv1.InstancetypeStatusRef{Name: name, Kind: kind, ControllerRevisionRef: &kubevirtv1.ControllerRevisionRef{Name: rev}}
	}
	cases := []struct {
		ref        *kubevirtv1.InstancetypeStatusRef
		name, kind string
		want       bool
	}{
		{ref("a", "virtualmachineclusterinstancetype", "r"), "a", "VirtualMachineClusterInstancetype", true},
		{ref("a", "VirtualMachineClusterInstancetype", "r"), "a", "virtualmachineclusterinstancetypes", true},
		{ref("a", "VirtualMachineInstancetype", "r"), "a", "VirtualMachineClusterInstancetype", false},
		{ref("b", "VirtualMachineClusterInstancetype", "r"), "a", "VirtualMachineClusterInstancetype", false},
		{ref("a", "VirtualMachineClusterInstancetype", ""), "a", "VirtualMachineClusterInstancetype", false},
		{ref("a", "", "r"), "a", "", false},
		{nil, "a", "VirtualMachineClusterInstancetype", false},
	}
	for _, c := range cases {
		if got := Matches(c.ref, c.name, c.kind); got != c.want {
			t.Errorf("Matches(%+v, %q, %q) = %v, want %v", c.ref, c.name, c.kind, got, c.want)
		}
	}
}
