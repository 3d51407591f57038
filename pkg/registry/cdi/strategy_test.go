package cdi

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/install"
	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

func testDV() *v1beta1.DataVolume {
	return &v1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "disk", Namespace: "ns", Generation: 5},
		Spec: v1beta1.DataVolumeSpec{
			Source: &v1beta1.DataVolumeSource{Blank: &v1beta1.DataVolumeBlankImage{}},
			Storage: &v1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		},
		Status: v1beta1.DataVolumeStatus{Phase: v1beta1.Succeeded, Progress: "100.0%"},
	}
}

// TestDataVolumeStrategies: create clears status and starts the generation; main-resource
// updates keep the status; /status updates keep the spec and the metadata users own.
func TestDataVolumeStrategies(t *testing.T) {
	ctx := context.Background()
	main, status := store.NewGroupStrategies(nil, store.Namespaced, versions, DataVolumeRules)

	dv := testDV()
	main.PrepareForCreate(ctx, dv)
	if dv.Status.Phase != "" || dv.Status.Progress != "" || dv.Generation != 1 {
		t.Errorf("after create: status %+v generation %d", dv.Status, dv.Generation)
	}

	old := testDV()
	upd := old.DeepCopy()
	upd.Status = v1beta1.DataVolumeStatus{Phase: v1beta1.Failed}
	upd.Labels = map[string]string{"a": "b"}
	main.PrepareForUpdate(ctx, upd, old)
	if upd.Status.Phase != v1beta1.Succeeded || upd.Generation != 5 {
		t.Errorf("main update: phase %q generation %d, want the old status and generation", upd.Status.Phase, upd.Generation)
	}

	st := old.DeepCopy()
	st.Spec.Source = &v1beta1.DataVolumeSource{Upload: &v1beta1.DataVolumeSourceUpload{}}
	st.Labels = map[string]string{"sneaky": "yes"}
	st.Status.Phase = v1beta1.ImportInProgress
	status.PrepareForUpdate(ctx, st, old)
	if st.Spec.Source.Blank == nil || st.Labels != nil || st.Status.Phase != v1beta1.ImportInProgress {
		t.Errorf("status update: source %+v labels %v phase %q", st.Spec.Source, st.Labels, st.Status.Phase)
	}

	// Spec changes through the main resource are refused; status is validated on /status.
	changed := old.DeepCopy()
	changed.Spec.Storage.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	if errs := main.ValidateUpdate(ctx, changed, old); len(errs) != 1 || errs[0].Field != "spec" {
		t.Errorf("spec change: %v", errs)
	}
	bad := old.DeepCopy()
	bad.Status.RestartCount = -2
	if errs := status.ValidateUpdate(ctx, bad, old); len(errs) != 1 || errs[0].Field != "status.restartCount" {
		t.Errorf("bad status: %v", errs)
	}

	// Server-side apply: the main resource resets status, /status resets spec, keyed by
	// cdi.kubevirt.io/v1beta1.
	v := fieldpath.APIVersion("cdi.kubevirt.io/v1beta1")
	if set := main.GetResetFields()[v]; set == nil || !set.Has(fieldpath.MakePathOrDie("status")) {
		t.Errorf("main reset fields %v", main.GetResetFields())
	}
	if set := status.GetResetFields()[v]; set == nil || !set.Has(fieldpath.MakePathOrDie("spec")) {
		t.Errorf("status reset fields %v", status.GetResetFields())
	}
}

// TestClusterScopedStrategies: StorageProfiles and CDIConfig are cluster-scoped, keep status on
// main writes and bump the generation on spec changes (their spec may change).
func TestClusterScopedStrategies(t *testing.T) {
	ctx := context.Background()
	sp, _ := store.NewGroupStrategies(nil, store.ClusterScoped, versions, StorageProfileRules)
	cfg, cfgStatus := store.NewGroupStrategies(nil, store.ClusterScoped, versions, CDIConfigRules)
	if sp.NamespaceScoped() || cfg.NamespaceScoped() {
		t.Fatal("a cluster-scoped kind is namespaced")
	}
	old := &v1beta1.CDIConfig{ObjectMeta: metav1.ObjectMeta{Name: "config", Generation: 1},
		Status: v1beta1.CDIConfigStatus{ScratchSpaceStorageClass: "local"}}
	upd := old.DeepCopy()
	upd.Spec.UploadProxyURLOverride = ptr("https://upload")
	upd.Status = v1beta1.CDIConfigStatus{}
	cfg.PrepareForUpdate(ctx, upd, old)
	if upd.Generation != 2 || upd.Status.ScratchSpaceStorageClass != "local" {
		t.Errorf("config update: generation %d status %+v", upd.Generation, upd.Status)
	}
	st := old.DeepCopy()
	st.Spec.UploadProxyURLOverride = ptr("https://sneaky")
	cfgStatus.PrepareForUpdate(ctx, st, old)
	if st.Spec.UploadProxyURLOverride != nil {
		t.Error("a /status write changed the spec")
	}
	created := &v1beta1.StorageProfile{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Status: v1beta1.StorageProfileStatus{Provisioner: ptr("x")}}
	sp.PrepareForCreate(ctx, created)
	if created.Status.Provisioner != nil {
		t.Error("create kept the status")
	}
}

func ptr[T any](v T) *T { return &v }

func TestSelectableFields(t *testing.T) {
	dv := testDV()
	_, f, err := getAttrs(true)(dv)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fields.Set{"metadata.name": "disk", "metadata.namespace": "ns", "status.phase": "Succeeded"}, f); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, f, err = getAttrs(false)(&v1beta1.CDIConfig{ObjectMeta: metav1.ObjectMeta{Name: "config"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fields.Set{"metadata.name": "config"}, f); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, _, err := getAttrs(true)(&metav1.Status{}); err == nil {
		t.Error("an object without metadata was accepted")
	}
}

func TestDataVolumeTable(t *testing.T) {
	dv := testDV()
	dv.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * time.Hour))
	dv.Status.RestartCount = 3
	tbl, err := DataVolumeTable().ConvertToTable(context.Background(), &v1beta1.DataVolumeList{Items: []v1beta1.DataVolume{*dv}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Phase", "Progress", "Restarts", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"disk", "Succeeded", "100.0%", int64(3), "120m"}, tbl.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}

// noStorage builds stores without a backend, enough to inspect discovery.
type noStorage struct{}

func (noStorage) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{GroupResource: resource},
		ResourcePrefix: resource.Group + "/" + resource.Resource,
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error),
			func() runtime.Object, func() runtime.Object, storage.AttrFunc, storage.IndexerFuncs,
			*cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			return nil, func() {}, nil
		},
	}, nil
}

// TestStorageDiscovery: the resources with CDI's scopes, short names and categories.
func TestStorageDiscovery(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	resources, err := NewStorage(scheme, noStorage{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	type discovery struct {
		Namespaced bool
		ShortNames []string
		Categories []string
		Singular   string
	}
	got := map[string]discovery{}
	for name, s := range resources {
		if dv, ok := s.(*dataVolumeREST); ok {
			s = dv.REST
		}
		if r, ok := s.(*store.REST); ok {
			got[name] = discovery{r.NamespaceScoped(), r.ShortNames(), r.Categories(), r.GetSingularName()}
		} else if _, ok := s.(*store.StatusREST); !ok {
			t.Errorf("%s: %T", name, s)
		}
	}
	want := map[string]discovery{
		"datavolumes":     {true, []string{"dv", "dvs"}, []string{"all"}, "datavolume"},
		"datasources":     {true, []string{"das"}, []string{"all"}, "datasource"},
		"storageprofiles": {false, nil, nil, "storageprofile"},
		"cdiconfigs":      {false, nil, nil, "cdiconfig"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("discovery (-want +got):\n%s", diff)
	}
	if len(resources) != 8 {
		t.Errorf("%d resources, want 4 and their /status", len(resources))
	}
}
