package instancetype

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

func testSpec() v1beta1.VirtualMachineInstancetypeSpec {
	return v1beta1.VirtualMachineInstancetypeSpec{
		CPU:    v1beta1.CPUInstancetype{Guest: 2},
		Memory: v1beta1.MemoryInstancetype{Guest: resource.MustParse("2Gi")},
	}
}

func TestScopes(t *testing.T) {
	for name, tc := range map[string]struct {
		strategy   store.Strategy
		namespaced bool
	}{
		"instancetypes":        {store.NewStrategy(nil, store.Namespaced, InstancetypeRules), true},
		"clusterinstancetypes": {store.NewStrategy(nil, store.ClusterScoped, ClusterInstancetypeRules), false},
		"preferences":          {store.NewStrategy(nil, store.Namespaced, PreferenceRules), true},
		"clusterpreferences":   {store.NewStrategy(nil, store.ClusterScoped, ClusterPreferenceRules), false},
	} {
		if got := tc.strategy.NamespaceScoped(); got != tc.namespaced {
			t.Errorf("%s: NamespaceScoped() = %v, want %v", name, got, tc.namespaced)
		}
		// No status: server-side apply resets nothing; every field is the user's.
		if got := tc.strategy.GetResetFields(); got != nil {
			t.Errorf("%s: reset fields %v, want none", name, got)
		}
	}
}

func TestPrepareForCreateStartsTheGeneration(t *testing.T) {
	s := store.NewStrategy(nil, store.ClusterScoped, ClusterInstancetypeRules)
	it := &v1beta1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "u1.small", Generation: 7}, Spec: testSpec()}
	s.PrepareForCreate(context.Background(), it)
	if it.Generation != 1 {
		t.Errorf("generation = %d, want 1", it.Generation)
	}
}

// TestPrepareForUpdateBumpsTheGenerationOnSpecChanges: instance types may be edited (KubeVirt
// allows it; VirtualMachines keep the revision they captured).
func TestPrepareForUpdateBumpsTheGenerationOnSpecChanges(t *testing.T) {
	s := store.NewStrategy(nil, store.Namespaced, InstancetypeRules)
	old := &v1beta1.VirtualMachineInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "it", Namespace: "ns", Generation: 3}, Spec: testSpec()}
	cases := []struct {
		name    string
		mutate  func(it *v1beta1.VirtualMachineInstancetype)
		wantGen int64
	}{
		{"labels only keep the generation", func(it *v1beta1.VirtualMachineInstancetype) { it.Labels = map[string]string{"a": "b"} }, 3},
		{"the same quantity written otherwise keeps it", func(it *v1beta1.VirtualMachineInstancetype) {
			it.Spec.Memory.Guest = resource.MustParse("2048Mi")
		}, 3},
		{"more vCPUs bump it", func(it *v1beta1.VirtualMachineInstancetype) { it.Spec.CPU.Guest = 4 }, 4},
		{"annotations of the spec bump it", func(it *v1beta1.VirtualMachineInstancetype) {
			it.Spec.Annotations = map[string]string{"x": "y"}
		}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			it := old.DeepCopy()
			c.mutate(it)
			s.PrepareForUpdate(context.Background(), it, old)
			if it.Generation != c.wantGen {
				t.Errorf("generation = %d, want %d", it.Generation, c.wantGen)
			}
		})
	}
}

// TestStrategiesValidate: each kind's strategy runs its validation, so a bad object is a 422
// naming the field.
func TestStrategiesValidate(t *testing.T) {
	ctx := context.Background()
	badIT := v1beta1.VirtualMachineInstancetypeSpec{Memory: v1beta1.MemoryInstancetype{Guest: resource.MustParse("1Gi")}}
	badPref := v1beta1.VirtualMachinePreferenceSpec{Devices: &v1beta1.DevicePreferences{PreferredDiskBus: "ide"}}
	cases := []struct {
		name     string
		strategy store.Strategy
		obj, old runtime.Object
		want     string
	}{
		{"instancetype", store.NewStrategy(nil, store.Namespaced, InstancetypeRules),
			&v1beta1.VirtualMachineInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}, Spec: badIT},
			&v1beta1.VirtualMachineInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}, Spec: testSpec()},
			"spec.cpu.guest"},
		{"cluster instancetype", store.NewStrategy(nil, store.ClusterScoped, ClusterInstancetypeRules),
			&v1beta1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: badIT},
			&v1beta1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: testSpec()},
			"spec.cpu.guest"},
		{"preference", store.NewStrategy(nil, store.Namespaced, PreferenceRules),
			&v1beta1.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}, Spec: badPref},
			&v1beta1.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}},
			"spec.devices.preferredDiskBus"},
		{"cluster preference", store.NewStrategy(nil, store.ClusterScoped, ClusterPreferenceRules),
			&v1beta1.VirtualMachineClusterPreference{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: badPref},
			&v1beta1.VirtualMachineClusterPreference{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
			"spec.devices.preferredDiskBus"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for what, errs := range map[string][]string{
				"create": fieldsOf(c.strategy.Validate(ctx, c.obj)),
				"update": fieldsOf(c.strategy.ValidateUpdate(ctx, c.obj, c.old)),
			} {
				if diff := cmp.Diff([]string{c.want}, errs); diff != "" {
					t.Errorf("%s: error fields (-want +got):\n%s", what, diff)
				}
			}
			if errs := c.strategy.ValidateUpdate(ctx, c.old, c.old); len(errs) != 0 {
				t.Errorf("valid update refused: %v", errs)
			}
		})
	}
}

func TestPreferencesWarnOfDeprecatedTopologies(t *testing.T) {
	ctx := context.Background()
	deprecated := v1beta1.DeprecatedPreferSockets
	spec := v1beta1.VirtualMachinePreferenceSpec{CPU: &v1beta1.CPUPreferences{PreferredCPUTopology: &deprecated}}
	want := []string{"PreferredCPUTopology preferSockets is deprecated for removal in a future release, please use sockets instead"}

	p := &v1beta1.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: spec}
	s := store.NewStrategy(nil, store.Namespaced, PreferenceRules)
	if diff := cmp.Diff(want, s.WarningsOnCreate(ctx, p)); diff != "" {
		t.Errorf("create warnings (-want +got):\n%s", diff)
	}
	cp := &v1beta1.VirtualMachineClusterPreference{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: spec}
	cs := store.NewStrategy(nil, store.ClusterScoped, ClusterPreferenceRules)
	if diff := cmp.Diff(want, cs.WarningsOnUpdate(ctx, cp, cp)); diff != "" {
		t.Errorf("update warnings (-want +got):\n%s", diff)
	}
	it := &v1beta1.VirtualMachineInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "it", Namespace: "ns"}, Spec: testSpec()}
	if got := store.NewStrategy(nil, store.Namespaced, InstancetypeRules).WarningsOnCreate(ctx, it); got != nil {
		t.Errorf("instance type warnings %v, want none", got)
	}
}

func TestSelectableFields(t *testing.T) {
	it := &v1beta1.VirtualMachineInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "it", Namespace: "ns", Labels: map[string]string{"a": "b"}}}
	l, f, err := getAttrs(true)(it)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(labels.Set{"a": "b"}, l); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(fields.Set{"metadata.name": "it", "metadata.namespace": "ns"}, f); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	cp := &v1beta1.VirtualMachineClusterPreference{ObjectMeta: metav1.ObjectMeta{Name: "cp"}}
	_, f, err = getAttrs(false)(cp)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fields.Set{"metadata.name": "cp"}, f); diff != "" {
		t.Errorf("cluster-scoped fields (-want +got):\n%s", diff)
	}
	if _, _, err := getAttrs(true)(&metav1.Status{}); err == nil {
		t.Error("an object without metadata was accepted")
	}
}

func TestTable(t *testing.T) {
	created := metav1.NewTime(time.Now().Add(-90 * time.Minute))
	list := &v1beta1.VirtualMachineClusterPreferenceList{
		ListMeta: metav1.ListMeta{ResourceVersion: "12"},
		Items:    []v1beta1.VirtualMachineClusterPreference{{ObjectMeta: metav1.ObjectMeta{Name: "fedora", CreationTimestamp: created}}},
	}
	tbl, err := table[*v1beta1.VirtualMachineClusterPreference]().ConvertToTable(context.Background(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(tbl.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(tbl.Rows))
	}
	if diff := cmp.Diff([]interface{}{"fedora", "90m"}, tbl.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if tbl.ResourceVersion != "12" {
		t.Errorf("resourceVersion = %q, want 12", tbl.ResourceVersion)
	}
}

// fieldsOf lists the fields the errors name.
func fieldsOf(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}
