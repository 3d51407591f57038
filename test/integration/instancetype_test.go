package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	kubevirtcorev1 "kubevirt.io/api/core/v1"
	kubevirtv1beta1 "kubevirt.io/api/instancetype/v1beta1"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/apitesting"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// instancetypeGroup is where instance types and preferences are served.
const instancetypeGroup = "/apis/instancetype.kubevirt.io/v1beta1"

// typedClient is what the generated clientset offers for each of the four kinds.
type typedClient[T any, L any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// object is an object of one of the four kinds.
type object interface {
	metav1.Object
	comparable
}

// crud creates obj, reads it back, finds it in a list (also by field selector), changes its spec
// with change (the generation goes to 2) and deletes it, through c. namespace is where the
// object must live ("" for the cluster-wide kinds).
func crud[T object, L any](t *testing.T, c typedClient[T, L], obj T, change func(T), items func(L) []T, namespace string) {
	t.Helper()
	ctx := context.Background()
	created, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.GetNamespace() != namespace || created.GetGeneration() != 1 || created.GetUID() == "" {
		t.Fatalf("created in namespace %q with generation %d and uid %q, want namespace %q, generation 1 and a uid",
			created.GetNamespace(), created.GetGeneration(), created.GetUID(), namespace)
	}
	got, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil || got.GetUID() != created.GetUID() {
		t.Fatalf("get: %v (uid %v, want %v)", err, got, created.GetUID())
	}
	for _, selector := range []string{"", "metadata.name=" + obj.GetName()} {
		list, err := c.List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			t.Fatalf("list (field selector %q): %v", selector, err)
		}
		var names []string
		for _, it := range items(list) {
			names = append(names, it.GetName())
		}
		if !slices.Contains(names, obj.GetName()) {
			t.Errorf("list (field selector %q) = %v, want it to hold %s", selector, names, obj.GetName())
		}
	}
	if list, err := c.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=other"}); err != nil || len(items(list)) != 0 {
		t.Errorf("list by another name: err=%v, %d items, want none", err, len(items(list)))
	}
	change(got)
	updated, err := c.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update of the spec: %v", err)
	}
	if updated.GetGeneration() != 2 {
		t.Errorf("generation after a spec change = %d, want 2", updated.GetGeneration())
	}
	if err := c.Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want NotFound", err)
	}
}

func itSpec(cpus int32, memory string) v1beta1.VirtualMachineInstancetypeSpec {
	return v1beta1.VirtualMachineInstancetypeSpec{
		CPU:    v1beta1.CPUInstancetype{Guest: cpus},
		Memory: v1beta1.MemoryInstancetype{Guest: resource.MustParse(memory)},
	}
}

func prefSpec(bus kubevirtv1.DiskBus) v1beta1.VirtualMachinePreferenceSpec {
	return v1beta1.VirtualMachinePreferenceSpec{Devices: &v1beta1.DevicePreferences{PreferredDiskBus: bus}}
}

// TestInstancetypeCRUD drives the four kinds through the generated clientset: the namespaced ones
// in a namespace, the cluster-wide ones at cluster scope; their spec may change.
func TestInstancetypeCRUD(t *testing.T) {
	srv := framework.Start(t, "")
	c := srv.Clientset(t).InstancetypeV1beta1()
	t.Run("VirtualMachineInstancetype", func(t *testing.T) {
		crud(t, c.VirtualMachineInstancetypes(ns),
			&v1beta1.VirtualMachineInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "u1.small"}, Spec: itSpec(1, "2Gi")},
			func(o *v1beta1.VirtualMachineInstancetype) { o.Spec.CPU.Guest = 2 },
			func(l *v1beta1.VirtualMachineInstancetypeList) []*v1beta1.VirtualMachineInstancetype {
				return ptrs(l.Items)
			}, ns)
	})
	t.Run("VirtualMachineClusterInstancetype", func(t *testing.T) {
		crud(t, c.VirtualMachineClusterInstancetypes(),
			&v1beta1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "u1.medium"}, Spec: itSpec(1, "4Gi")},
			func(o *v1beta1.VirtualMachineClusterInstancetype) { o.Spec.Memory.Guest = resource.MustParse("8Gi") },
			func(l *v1beta1.VirtualMachineClusterInstancetypeList) []*v1beta1.VirtualMachineClusterInstancetype {
				return ptrs(l.Items)
			}, "")
	})
	t.Run("VirtualMachinePreference", func(t *testing.T) {
		crud(t, c.VirtualMachinePreferences(ns),
			&v1beta1.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: "fedora"}, Spec: prefSpec(kubevirtv1.DiskBusVirtio)},
			func(o *v1beta1.VirtualMachinePreference) { o.Spec.Devices.PreferredDiskBus = kubevirtv1.DiskBusSATA },
			func(l *v1beta1.VirtualMachinePreferenceList) []*v1beta1.VirtualMachinePreference {
				return ptrs(l.Items)
			}, ns)
	})
	t.Run("VirtualMachineClusterPreference", func(t *testing.T) {
		crud(t, c.VirtualMachineClusterPreferences(),
			&v1beta1.VirtualMachineClusterPreference{ObjectMeta: metav1.ObjectMeta{Name: "windows.2k22"}, Spec: prefSpec(kubevirtv1.DiskBusSATA)},
			func(o *v1beta1.VirtualMachineClusterPreference) {
				o.Spec.PreferredTerminationGracePeriodSeconds = ptr(int64(3600))
			},
			func(l *v1beta1.VirtualMachineClusterPreferenceList) []*v1beta1.VirtualMachineClusterPreference {
				return ptrs(l.Items)
			}, "")
	})

	// A cluster-wide object is reached without a namespace, and nowhere under one.
	ctx := context.Background()
	if _, err := c.VirtualMachineClusterInstancetypes().Create(ctx, &v1beta1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "cx1.large"}, Spec: itSpec(2, "4Gi")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	client := srv.HTTPClient(t)
	if r := do(t, client, http.MethodGet, srv.Config.Host+instancetypeGroup+"/virtualmachineclusterinstancetypes/cx1.large", "", nil); r.code != http.StatusOK {
		t.Errorf("GET at cluster scope: %d %s", r.code, truncate(r.body))
	}
	if r := do(t, client, http.MethodGet, srv.Config.Host+instancetypeGroup+"/namespaces/default/virtualmachineclusterinstancetypes/cx1.large", "", nil); r.code != http.StatusNotFound {
		t.Errorf("GET under a namespace: %d, want 404", r.code)
	}
	// Server-side apply works on the group's schema.
	applied, err := c.VirtualMachineClusterInstancetypes().Patch(ctx, "cx1.large", types.ApplyPatchType,
		[]byte(`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterInstancetype","metadata":{"name":"cx1.large"},"spec":{"cpu":{"guest":4},"memory":{"guest":"8Gi"}}}`),
		metav1.PatchOptions{FieldManager: "integration", Force: ptr(true)})
	if err != nil || applied.Spec.CPU.Guest != 4 || applied.Generation != 2 {
		t.Fatalf("server-side apply: %v (cpu %v)", err, applied)
	}
}

// ptrs returns pointers to the items of a list.
func ptrs[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// TestInstancetypeRefusals: a bad object is a 422 naming the field, an unsupported feature a 422
// saying so, an unknown field a 400 under strict field validation, an unknown field selector a
// 400; a deprecated topology is accepted with a warning.
func TestInstancetypeRefusals(t *testing.T) {
	srv := framework.Start(t, "")
	client := srv.HTTPClient(t)
	cases := []struct {
		name, path, body string
		code             int
		contains         []string
	}{
		{"missing vCPUs", "/namespaces/default/virtualmachineinstancetypes",
			`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineInstancetype","metadata":{"name":"bad"},"spec":{"cpu":{"guest":0},"memory":{"guest":"1Gi"}}}`,
			http.StatusUnprocessableEntity, []string{"spec.cpu.guest", "Required value"}},
		{"overcommit above 100", "/virtualmachineclusterinstancetypes",
			`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterInstancetype","metadata":{"name":"bad"},"spec":{"cpu":{"guest":1},"memory":{"guest":"1Gi","overcommitPercent":150}}}`,
			http.StatusUnprocessableEntity, []string{"spec.memory.overcommitPercent"}},
		{"GPU passthrough", "/virtualmachineclusterinstancetypes",
			`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterInstancetype","metadata":{"name":"gpu"},"spec":{"cpu":{"guest":1},"memory":{"guest":"1Gi"},"gpus":[{"name":"g","deviceName":"nvidia.com/T4"}]}}`,
			http.StatusUnprocessableEntity, []string{"spec.gpus", "GPU passthrough (gpus) is not supported by NativeVirt yet"}},
		{"unknown disk bus", "/namespaces/default/virtualmachinepreferences",
			`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachinePreference","metadata":{"name":"bad"},"spec":{"devices":{"preferredDiskBus":"ide"}}}`,
			http.StatusUnprocessableEntity, []string{"spec.devices.preferredDiskBus", "Unsupported value"}},
		{"persistent TPM", "/virtualmachineclusterpreferences",
			`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterPreference","metadata":{"name":"windows.11"},"spec":{"devices":{"preferredTPM":{"persistent":true}}}}`,
			http.StatusUnprocessableEntity, []string{"spec.devices.preferredTPM.persistent", "is not supported by NativeVirt yet"}},
		{"unknown field", "/virtualmachineclusterpreferences?fieldValidation=Strict",
			`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterPreference","metadata":{"name":"video"},"spec":{"devices":{"preferredVideoType":"virtio"}}}`,
			http.StatusBadRequest, []string{"preferredVideoType"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, client, http.MethodPost, srv.Config.Host+instancetypeGroup+c.path, "application/json", []byte(c.body))
			if r.code != c.code {
				t.Fatalf("got %d %s, want %d", r.code, truncate(r.body), c.code)
			}
			for _, s := range c.contains {
				if !strings.Contains(r.body, s) {
					t.Errorf("answer %s does not contain %q", truncate(r.body), s)
				}
			}
		})
	}

	t.Run("unknown field selector", func(t *testing.T) {
		r := do(t, client, http.MethodGet, srv.Config.Host+instancetypeGroup+"/virtualmachineclusterpreferences?fieldSelector=spec.cpu=x", "", nil)
		if r.code != http.StatusBadRequest {
			t.Fatalf("got %d %s, want 400", r.code, truncate(r.body))
		}
	})

	t.Run("deprecated topology warns", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, srv.Config.Host+instancetypeGroup+"/virtualmachineclusterpreferences",
			strings.NewReader(`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterPreference","metadata":{"name":"old"},"spec":{"cpu":{"preferredCPUTopology":"preferSockets"}}}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated || !strings.Contains(resp.Header.Get("Warning"), "preferSockets is deprecated") {
			t.Fatalf("got %s with warning %q, want 201 warning of preferSockets", resp.Status, resp.Header.Get("Warning"))
		}
	})
}

// TestInstancetypeDiscoveryTablesOpenAPI: discovery lists the group with KubeVirt's short names
// and scopes; `kubectl get` shows NAME and AGE; OpenAPI v2 and v3 describe the kinds (what
// `kubectl explain virtualmachineinstancetype.spec.cpu.guest` reads).
func TestInstancetypeDiscoveryTablesOpenAPI(t *testing.T) {
	srv := framework.Start(t, "")
	dc, err := discovery.NewDiscoveryClientForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := dc.ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	var preferred string
	for _, g := range groups.Groups {
		if g.Name == v1beta1.GroupName {
			preferred = g.PreferredVersion.GroupVersion
		}
	}
	if preferred != "instancetype.kubevirt.io/v1beta1" {
		t.Fatalf("group %s: preferred version %q, want instancetype.kubevirt.io/v1beta1", v1beta1.GroupName, preferred)
	}
	list, err := dc.ServerResourcesForGroupVersion("instancetype.kubevirt.io/v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	type resourceInfo struct {
		Kind       string
		Namespaced bool
		ShortNames []string
		Categories []string
	}
	got := map[string]resourceInfo{}
	for _, r := range list.APIResources {
		got[r.Name] = resourceInfo{r.Kind, r.Namespaced, r.ShortNames, r.Categories}
		if !slices.Equal(r.Verbs, metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}) {
			t.Errorf("%s verbs %v", r.Name, r.Verbs)
		}
	}
	want := map[string]resourceInfo{
		"virtualmachineinstancetypes":        {"VirtualMachineInstancetype", true, []string{"vminstancetype", "vminstancetypes", "vmf", "vmfs"}, []string{"all"}},
		"virtualmachineclusterinstancetypes": {"VirtualMachineClusterInstancetype", false, []string{"vmclusterinstancetype", "vmclusterinstancetypes", "vmcf", "vmcfs"}, nil},
		"virtualmachinepreferences":          {"VirtualMachinePreference", true, []string{"vmpref", "vmprefs", "vmp", "vmps"}, []string{"all"}},
		"virtualmachineclusterpreferences":   {"VirtualMachineClusterPreference", false, []string{"vmcp", "vmcps"}, nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("discovery of instancetype.kubevirt.io/v1beta1 (-want +got):\n%s", diff)
	}

	t.Run("tables", func(t *testing.T) {
		ctx := context.Background()
		c := srv.Clientset(t).InstancetypeV1beta1()
		if _, err := c.VirtualMachineInstancetypes(ns).Create(ctx, &v1beta1.VirtualMachineInstancetype{
			ObjectMeta: metav1.ObjectMeta{Name: "t"}, Spec: itSpec(1, "1Gi")}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.VirtualMachineClusterPreferences().Create(ctx, &v1beta1.VirtualMachineClusterPreference{
			ObjectMeta: metav1.ObjectMeta{Name: "t"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		client := srv.HTTPClient(t)
		for _, path := range []string{"/namespaces/default/virtualmachineinstancetypes", "/namespaces/default/virtualmachineinstancetypes/t",
			"/virtualmachineclusterpreferences", "/virtualmachineclusterpreferences/t"} {
			req, _ := http.NewRequest(http.MethodGet, srv.Config.Host+instancetypeGroup+path, nil)
			req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var table metav1.Table
			if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &table) != nil {
				t.Fatalf("GET %s as Table: %s %s", path, resp.Status, body)
			}
			var cols []string
			for _, col := range table.ColumnDefinitions {
				cols = append(cols, col.Name)
			}
			if diff := cmp.Diff([]string{"Name", "Age"}, cols); diff != "" {
				t.Errorf("%s columns (-want +got):\n%s", path, diff)
			}
			if len(table.Rows) != 1 || table.Rows[0].Cells[0] != "t" {
				t.Errorf("%s rows %v, want one named t", path, table.Rows)
			}
		}
	})

	t.Run("openapi", func(t *testing.T) {
		const prefix = "com.github.nativevirt.nativevirt.pkg.apis.instancetype.v1beta1."
		var v3 struct {
			Components struct {
				Schemas map[string]openAPISchema `json:"schemas"`
			} `json:"components"`
		}
		getJSON(t, srv, "/openapi/v3/apis/instancetype.kubevirt.io/v1beta1", &v3)
		var v2 struct {
			Definitions map[string]openAPISchema `json:"definitions"`
		}
		getJSON(t, srv, "/openapi/v2", &v2)
		for doc, schemas := range map[string]map[string]openAPISchema{"v3": v3.Components.Schemas, "v2": v2.Definitions} {
			for _, kind := range []string{v1beta1.InstancetypeKind, v1beta1.ClusterInstancetypeKind, v1beta1.PreferenceKind, v1beta1.ClusterPreferenceKind} {
				def, ok := schemas[prefix+kind]
				if !ok {
					t.Errorf("%s: no definition of %s", doc, kind)
					continue
				}
				if def.Description == "" {
					t.Errorf("%s: %s has no description", doc, kind)
				}
				want := []map[string]string{{"group": "instancetype.kubevirt.io", "version": "v1beta1", "kind": kind}}
				if diff := cmp.Diff(want, def.GVK); diff != "" {
					t.Errorf("%s: %s x-kubernetes-group-version-kind (-want +got):\n%s", doc, kind, diff)
				}
			}
			// spec.cpu.guest, as kubectl explain walks to it.
			guest := schemas[prefix+"CPUInstancetype"].Properties["guest"]
			if guest.Description == "" {
				t.Errorf("%s: spec.cpu.guest has no description", doc)
			}
			if !slices.Contains(schemas[prefix+"CPUInstancetype"].Required, "guest") {
				t.Errorf("%s: spec.cpu.guest is not required", doc)
			}
		}
	})
}

// openAPISchema is the part of an OpenAPI schema the test reads.
type openAPISchema struct {
	Description string                   `json:"description"`
	Required    []string                 `json:"required"`
	Properties  map[string]openAPISchema `json:"properties"`
	GVK         []map[string]string      `json:"x-kubernetes-group-version-kind"`
}

// getJSON decodes the server's answer to GET path into v.
func getJSON(t *testing.T, srv *framework.Server, path string, v any) {
	t.Helper()
	r := do(t, srv.HTTPClient(t), http.MethodGet, srv.Config.Host+path, "", nil)
	if r.code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.code, truncate(r.body))
	}
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
}

// TestInstancetypeFromKubeVirtTypes: objects written with KubeVirt's own Go types (kubevirt.io/api),
// sent as raw JSON under strict field validation, are stored and read back into KubeVirt's types
// unchanged.
func TestInstancetypeFromKubeVirtTypes(t *testing.T) {
	srv := framework.Start(t, "")
	client := srv.HTTPClient(t)
	model := "host-model"
	maxSockets := uint32(4)
	it := &kubevirtv1beta1.VirtualMachineClusterInstancetype{
		TypeMeta: metav1.TypeMeta{APIVersion: "instancetype.kubevirt.io/v1beta1", Kind: "VirtualMachineClusterInstancetype"},
		ObjectMeta: metav1.ObjectMeta{Name: "u1.large", Labels: map[string]string{"instancetype.kubevirt.io/class": "general.purpose"},
			Annotations: map[string]string{"instancetype.kubevirt.io/description": "The U Series"}},
		Spec: kubevirtv1beta1.VirtualMachineInstancetypeSpec{
			CPU:          kubevirtv1beta1.CPUInstancetype{Guest: 2, Model: &model, MaxSockets: &maxSockets},
			Memory:       kubevirtv1beta1.MemoryInstancetype{Guest: resource.MustParse("8Gi"), OvercommitPercent: 10},
			NodeSelector: map[string]string{"kubernetes.io/arch": "amd64"},
			Annotations:  map[string]string{"vm.kubevirt.io/flavor": "large"},
		},
	}
	topology := kubevirtv1beta1.Spread
	across := kubevirtv1beta1.SpreadAcrossSocketsCoresThreads
	ratio := uint32(4)
	grace := int64(3600)
	pref := &kubevirtv1beta1.VirtualMachinePreference{
		TypeMeta:   metav1.TypeMeta{APIVersion: "instancetype.kubevirt.io/v1beta1", Kind: "VirtualMachinePreference"},
		ObjectMeta: metav1.ObjectMeta{Name: "windows.2k22", Namespace: ns},
		Spec: kubevirtv1beta1.VirtualMachinePreferenceSpec{
			CPU: &kubevirtv1beta1.CPUPreferences{PreferredCPUTopology: &topology,
				SpreadOptions: &kubevirtv1beta1.SpreadOptions{Across: &across, Ratio: &ratio}},
			Clock: &kubevirtv1beta1.ClockPreferences{PreferredClockOffset: &kubevirtcorev1.ClockOffset{UTC: &kubevirtcorev1.ClockOffsetUTC{}}},
			Devices: &kubevirtv1beta1.DevicePreferences{PreferredDiskBus: kubevirtcorev1.DiskBusSATA,
				PreferredInterfaceModel: "e1000e", PreferredTPM: &kubevirtcorev1.TPMDevice{}},
			Features: &kubevirtv1beta1.FeaturePreferences{PreferredSmm: &kubevirtcorev1.FeatureState{},
				PreferredHyperv: &kubevirtcorev1.FeatureHyperv{Relaxed: &kubevirtcorev1.FeatureState{}}},
			Firmware:                               &kubevirtv1beta1.FirmwarePreferences{PreferredEfi: &kubevirtcorev1.EFI{}},
			PreferredTerminationGracePeriodSeconds: &grace,
			Requirements: &kubevirtv1beta1.PreferenceRequirements{
				CPU:    &kubevirtv1beta1.CPUPreferenceRequirement{Guest: 2},
				Memory: &kubevirtv1beta1.MemoryPreferenceRequirement{Guest: resource.MustParse("4Gi")},
			},
		},
	}
	for _, c := range []struct {
		path          string
		sent, decoded any
		spec          func(any) any
	}{
		{instancetypeGroup + "/virtualmachineclusterinstancetypes", it, &kubevirtv1beta1.VirtualMachineClusterInstancetype{},
			func(o any) any { return o.(*kubevirtv1beta1.VirtualMachineClusterInstancetype).Spec }},
		{instancetypeGroup + "/namespaces/default/virtualmachinepreferences", pref, &kubevirtv1beta1.VirtualMachinePreference{},
			func(o any) any { return o.(*kubevirtv1beta1.VirtualMachinePreference).Spec }},
	} {
		body, err := json.Marshal(c.sent)
		if err != nil {
			t.Fatal(err)
		}
		r := do(t, client, http.MethodPost, srv.Config.Host+c.path+"?fieldValidation=Strict", "application/json", body)
		if r.code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", c.path, r.code, truncate(r.body))
		}
		name := c.sent.(metav1.Object).GetName()
		r = do(t, client, http.MethodGet, srv.Config.Host+c.path+"/"+name, "", nil)
		if r.code != http.StatusOK {
			t.Fatalf("GET %s/%s: %d %s", c.path, name, r.code, truncate(r.body))
		}
		if err := apitesting.StrictUnmarshal([]byte(r.body), c.decoded); err != nil {
			t.Fatalf("what the server answered does not decode strictly into KubeVirt's type: %v\n%s", err, r.body)
		}
		if diff := cmp.Diff(c.spec(c.sent), c.spec(c.decoded)); diff != "" {
			t.Errorf("%s: spec read back differs (-sent +read):\n%s", name, diff)
		}
		got := c.decoded.(metav1.Object)
		if !cmp.Equal(got.GetLabels(), c.sent.(metav1.Object).GetLabels()) || got.GetGeneration() != 1 {
			t.Errorf("%s: metadata read back: labels %v, generation %d", name, got.GetLabels(), got.GetGeneration())
		}
	}
}
