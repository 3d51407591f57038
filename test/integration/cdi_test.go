package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	uploadv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/upload/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/apiserver/app"
	informers "github.com/nativevirt/nativevirt/pkg/client/informers/externalversions"
	"github.com/nativevirt/nativevirt/pkg/uploadtoken"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// cdiGroup is where DataVolumes and their kin are served.
const cdiGroup = "/apis/cdi.kubevirt.io/v1beta1"

func httpDataVolume(name string) *cdiv1beta1.DataVolume {
	return &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source: &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "https://example.com/fedora.qcow2"}},
			Storage: &cdiv1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		},
	}
}

// TestDataVolumeCRUDAndStatus drives DataVolumes through the generated clientset: create (status
// cleared), get, list by field selector (status.phase too), a metadata update, a refused spec
// update, /status (spec changes there are dropped), server-side apply, delete.
func TestDataVolumeCRUDAndStatus(t *testing.T) {
	srv := framework.Start(t, "")
	ctx := context.Background()
	c := srv.Clientset(t).CdiV1beta1().DataVolumes(ns)

	in := httpDataVolume("fedora")
	in.Status.Phase = cdiv1beta1.Succeeded // users cannot set status
	dv, err := c.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if dv.Status.Phase != "" || dv.Generation != 1 || dv.Namespace != ns {
		t.Fatalf("created: phase %q generation %d namespace %q", dv.Status.Phase, dv.Generation, dv.Namespace)
	}
	if _, err := c.Get(ctx, "fedora", metav1.GetOptions{}); err != nil {
		t.Fatalf("get: %v", err)
	}

	// A spec change is refused, a label change is not.
	changed := dv.DeepCopy()
	changed.Spec.Source.HTTP.URL = "https://example.com/other.qcow2"
	if _, err := c.Update(ctx, changed, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "Cannot update DataVolume Spec") {
		t.Errorf("spec update: %v, want 422 Cannot update DataVolume Spec", err)
	}
	labelled := dv.DeepCopy()
	labelled.Labels = map[string]string{"os": "fedora"}
	if dv, err = c.Update(ctx, labelled, metav1.UpdateOptions{}); err != nil || dv.Generation != 1 {
		t.Fatalf("label update: %v (generation %d)", err, dv.Generation)
	}

	// The controller's status write; a spec change sent along is dropped.
	st := dv.DeepCopy()
	st.Spec.Source.HTTP.URL = "https://example.com/sneaky.qcow2"
	st.Status = cdiv1beta1.DataVolumeStatus{ClaimName: "fedora", Phase: cdiv1beta1.ImportInProgress, Progress: "45.00%", RestartCount: 1,
		Conditions: []cdiv1beta1.DataVolumeCondition{{Type: cdiv1beta1.DataVolumeRunning, Status: corev1.ConditionTrue, Reason: "Pod is running"}}}
	dv, err = c.UpdateStatus(ctx, st, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if dv.Status.Phase != cdiv1beta1.ImportInProgress || dv.Spec.Source.HTTP.URL != "https://example.com/fedora.qcow2" {
		t.Errorf("after /status: phase %q url %q", dv.Status.Phase, dv.Spec.Source.HTTP.URL)
	}
	bad := dv.DeepCopy()
	bad.Status.Conditions[0].Status = "Perhaps"
	if _, err := c.UpdateStatus(ctx, bad, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "status.conditions[0].status") {
		t.Errorf("bad status: %v, want 422 naming status.conditions[0].status", err)
	}

	for selector, want := range map[string]int{
		"status.phase=ImportInProgress": 1, "status.phase=Succeeded": 0, "metadata.name=fedora": 1, "metadata.namespace=" + ns: 1,
	} {
		list, err := c.List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil || len(list.Items) != want {
			t.Errorf("list %s: %v, %d items, want %d", selector, err, len(list.Items), want)
		}
	}

	// Server-side apply of the same spec by another manager, with a label.
	applied, err := c.Patch(ctx, "fedora", types.ApplyPatchType, []byte(`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume",
		"metadata":{"name":"fedora","labels":{"applied":"yes"}},
		"spec":{"source":{"http":{"url":"https://example.com/fedora.qcow2"}},"storage":{"resources":{"requests":{"storage":"1Gi"}}}}}`),
		metav1.PatchOptions{FieldManager: "integration", Force: ptr(true)})
	if err != nil || applied.Labels["applied"] != "yes" || applied.Status.Phase != cdiv1beta1.ImportInProgress {
		t.Fatalf("server-side apply: %v", err)
	}

	// A clone may omit the size (the standalone server's user may clone from anywhere).
	clone := &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "clone"}, Spec: cdiv1beta1.DataVolumeSpec{
		SourceRef: &cdiv1beta1.DataVolumeSourceRef{Kind: "DataSource", Namespace: ptr("golden"), Name: "fedora"},
		Storage:   &cdiv1beta1.StorageSpec{}}}
	if _, err := c.Create(ctx, clone, metav1.CreateOptions{}); err != nil {
		t.Errorf("create a clone without a size: %v", err)
	}

	if err := c.Delete(ctx, "fedora", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := c.Get(ctx, "fedora", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v", err)
	}
}

// TestCDIKindsCRUD: DataSources (namespaced), StorageProfiles and CDIConfig (cluster-scoped),
// each with /status, through the generated clientset and the dynamic client.
func TestCDIKindsCRUD(t *testing.T) {
	srv := framework.Start(t, "")
	ctx := context.Background()
	c := srv.Clientset(t).CdiV1beta1()

	ds, err := c.DataSources(ns).Create(ctx, &cdiv1beta1.DataSource{ObjectMeta: metav1.ObjectMeta{Name: "fedora"},
		Spec: cdiv1beta1.DataSourceSpec{Source: cdiv1beta1.DataSourceSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: "golden", Name: "fedora-40"}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create DataSource: %v", err)
	}
	ds.Spec.Source.PVC.Name = "fedora-41" // a DataSource's source may move on
	if ds, err = c.DataSources(ns).Update(ctx, ds, metav1.UpdateOptions{}); err != nil || ds.Generation != 2 {
		t.Fatalf("update DataSource: %v", err)
	}
	ds.Status.Conditions = []cdiv1beta1.DataSourceCondition{{Type: cdiv1beta1.DataSourceReady, ConditionState: cdiv1beta1.ConditionState{Status: corev1.ConditionTrue}}}
	if ds, err = c.DataSources(ns).UpdateStatus(ctx, ds, metav1.UpdateOptions{}); err != nil || len(ds.Status.Conditions) != 1 {
		t.Fatalf("DataSource status: %v", err)
	}

	block := corev1.PersistentVolumeBlock
	sp, err := c.StorageProfiles().Create(ctx, &cdiv1beta1.StorageProfile{ObjectMeta: metav1.ObjectMeta{Name: "local-path"},
		Spec: cdiv1beta1.StorageProfileSpec{ClaimPropertySets: []cdiv1beta1.ClaimPropertySet{
			{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: &block}}}}, metav1.CreateOptions{})
	if err != nil || sp.Namespace != "" {
		t.Fatalf("create StorageProfile: %v", err)
	}
	sp.Status.StorageClass, sp.Status.Provisioner = ptr("local-path"), ptr("rancher.io/local-path")
	if sp, err = c.StorageProfiles().UpdateStatus(ctx, sp, metav1.UpdateOptions{}); err != nil || *sp.Status.Provisioner != "rancher.io/local-path" {
		t.Fatalf("StorageProfile status: %v", err)
	}

	cfg, err := c.CDIConfigs().Create(ctx, &cdiv1beta1.CDIConfig{ObjectMeta: metav1.ObjectMeta{Name: "config"},
		Spec: cdiv1beta1.CDIConfigSpec{UploadProxyURLOverride: ptr("https://upload.example.com")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create CDIConfig: %v", err)
	}
	cfg.Status.UploadProxyURL = ptr("https://cdi-uploadproxy.nativevirt.svc")
	if _, err := c.CDIConfigs().UpdateStatus(ctx, cfg, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("CDIConfig status: %v", err)
	}
	if _, err := c.CDIConfigs().Create(ctx, &cdiv1beta1.CDIConfig{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a CDIConfig not named config: %v, want 422", err)
	}

	// The dynamic client reads them as virtctl does (CDIConfig's upload proxy URL).
	dyn := srv.Dynamic(t)
	u, err := dyn.Resource(schema.GroupVersionResource{Group: "cdi.kubevirt.io", Version: "v1beta1", Resource: "cdiconfigs"}).Get(ctx, "config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(u.Object, "spec", "uploadProxyURLOverride"); got != "https://upload.example.com" {
		t.Errorf("spec.uploadProxyURLOverride = %q", got)
	}
	if got, _, _ := unstructured.NestedString(u.Object, "status", "uploadProxyURL"); got != "https://cdi-uploadproxy.nativevirt.svc" {
		t.Errorf("status.uploadProxyURL = %q", got)
	}
	dvs, err := dyn.Resource(schema.GroupVersionResource{Group: "cdi.kubevirt.io", Version: "v1beta1", Resource: "datasources"}).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(dvs.Items) != 1 {
		t.Fatalf("dynamic list of datasources: %v", err)
	}

	for _, del := range []func() error{
		func() error { return c.DataSources(ns).Delete(ctx, "fedora", metav1.DeleteOptions{}) },
		func() error { return c.StorageProfiles().Delete(ctx, "local-path", metav1.DeleteOptions{}) },
		func() error { return c.CDIConfigs().Delete(ctx, "config", metav1.DeleteOptions{}) },
	} {
		if err := del(); err != nil {
			t.Errorf("delete: %v", err)
		}
	}
}

// TestCDIRefusals: bad DataVolumes are 422s naming the field; unknown fields 400s under strict
// field validation.
func TestCDIRefusals(t *testing.T) {
	srv := framework.Start(t, "")
	client := srv.HTTPClient(t)
	const head = `{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","metadata":{"name":"bad"},"spec":`
	const storage = `"storage":{"resources":{"requests":{"storage":"1Gi"}}}`
	cases := []struct {
		name, path, body string
		code             int
		contains         []string
	}{
		{"no source", "/namespaces/default/datavolumes", head + `{` + storage + `}}`,
			http.StatusUnprocessableEntity, []string{"spec.source", "either Source or SourceRef"}},
		{"ftp url", "/namespaces/default/datavolumes", head + `{"source":{"http":{"url":"ftp://example.com/x"}},` + storage + `}}`,
			http.StatusUnprocessableEntity, []string{"spec.source.http.url"}},
		{"registry scheme", "/namespaces/default/datavolumes", head + `{"source":{"registry":{"url":"quay.io/x"}},` + storage + `}}`,
			http.StatusUnprocessableEntity, []string{"spec.source.registry.url", "docker://"}},
		{"registry image stream", "/namespaces/default/datavolumes", head + `{"source":{"registry":{"imageStream":"fedora","pullMethod":"node"}},` + storage + `}}`,
			http.StatusUnprocessableEntity, []string{"spec.source.registry.imageStream", "not supported"}},
		{"pvc and storage", "/namespaces/default/datavolumes", head + `{"source":{"blank":{}},"pvc":{"accessModes":["ReadWriteOnce"]},` + storage + `}}`,
			http.StatusUnprocessableEntity, []string{"spec.storage", "Duplicate storage definition"}},
		{"zero size", "/namespaces/default/datavolumes", head + `{"source":{"blank":{}},"storage":{"resources":{"requests":{"storage":"0"}}}}}`,
			http.StatusUnprocessableEntity, []string{"spec.storage.resources.requests.storage"}},
		{"s3", "/namespaces/default/datavolumes", head + `{"source":{"s3":{"url":"s3://b/k"}},` + storage + `}}`,
			http.StatusUnprocessableEntity, []string{"spec.source.s3", "not supported"}},
		{"unknown field", "/namespaces/default/datavolumes?fieldValidation=Strict", head + `{"source":{"http":{"url":"https://x/y","proxy":"p"}},` + storage + `}}`,
			http.StatusBadRequest, []string{"proxy"}},
		{"unknown field of a StorageProfile", "/storageprofiles?fieldValidation=Strict",
			`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"StorageProfile","metadata":{"name":"x"},"spec":{"cloneStrategyy":"copy"}}`,
			http.StatusBadRequest, []string{"cloneStrategyy"}},
		{"clone strategy", "/storageprofiles",
			`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"StorageProfile","metadata":{"name":"x"},"spec":{"cloneStrategy":"rsync"}}`,
			http.StatusUnprocessableEntity, []string{"spec.cloneStrategy"}},
		{"overhead", "/cdiconfigs",
			`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"CDIConfig","metadata":{"name":"config"},"spec":{"filesystemOverhead":{"global":"6%"}}}`,
			http.StatusUnprocessableEntity, []string{"spec.filesystemOverhead.global"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, client, http.MethodPost, srv.Config.Host+cdiGroup+c.path, "application/json", []byte(c.body))
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
	t.Run("duplicate condition types", func(t *testing.T) {
		base := srv.Config.Host + cdiGroup + "/namespaces/default/datavolumes"
		if r := do(t, client, http.MethodPost, base, "application/json",
			[]byte(`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","metadata":{"name":"dup"},"spec":{"source":{"blank":{}},`+storage+`}}`)); r.code != http.StatusCreated {
			t.Fatalf("create: %d %s", r.code, truncate(r.body))
		}
		conds := `"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Ready","status":"False"}]}`
		for _, c := range []struct{ url, contentType, body string }{
			{base + "/dup/status?fieldManager=t", "application/apply-patch+yaml",
				`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","metadata":{"name":"dup"},` + conds + `}`},
			{base + "/dup/status", "application/merge-patch+json", `{` + conds + `}`},
		} {
			r := do(t, client, http.MethodPatch, c.url, c.contentType, []byte(c.body))
			if (r.code != http.StatusBadRequest && r.code != http.StatusUnprocessableEntity) || !strings.Contains(r.body, "status.conditions[1].type") {
				t.Errorf("%s: %d %s, want a 4xx naming status.conditions[1].type", c.contentType, r.code, truncate(r.body))
			}
		}
	})
	t.Run("unknown field selector", func(t *testing.T) {
		r := do(t, client, http.MethodGet, srv.Config.Host+cdiGroup+"/datavolumes?fieldSelector=spec.source=x", "", nil)
		if r.code != http.StatusBadRequest {
			t.Fatalf("got %d %s, want 400", r.code, truncate(r.body))
		}
	})
}

// TestUploadTokenRequest: creating an UploadTokenRequest answers with a token that the upload
// proxy's key accepts for that namespace and claim only; nothing is stored.
func TestUploadTokenRequest(t *testing.T) {
	key, err := uploadtoken.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := t.TempDir() + "/key"
	if err := writeKey(keyFile); err != nil {
		t.Fatal(err)
	}
	shared, err := uploadtoken.LoadKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := framework.StartWithOptions(t, "", func(o *app.Options) { o.UploadTokenKeyFile = keyFile })
	ctx := context.Background()
	c := srv.Clientset(t).UploadV1beta1().UploadTokenRequests(ns)
	out, err := c.Create(ctx, &uploadv1beta1.UploadTokenRequest{ObjectMeta: metav1.ObjectMeta{Name: "token-for-virtctl"},
		Spec: uploadv1beta1.UploadTokenRequestSpec{PvcName: "fedora"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if out.Status.Token == "" {
		t.Fatal("no token")
	}
	if err := shared.VerifyFor(out.Status.Token, ns, "fedora", time.Now()); err != nil {
		t.Errorf("the token does not verify with the server's key: %v", err)
	}
	if err := shared.VerifyFor(out.Status.Token, ns, "other", time.Now()); err == nil {
		t.Error("the token verifies for another claim")
	}
	if err := shared.VerifyFor(out.Status.Token, "kube-system", "fedora", time.Now()); err == nil {
		t.Error("the token verifies for another namespace")
	}
	if err := key.VerifyFor(out.Status.Token, ns, "fedora", time.Now()); err == nil {
		t.Error("the token verifies with another key")
	}

	client := srv.HTTPClient(t)
	base := srv.Config.Host + "/apis/upload.cdi.kubevirt.io/v1beta1/namespaces/default/uploadtokenrequests"
	if r := do(t, client, http.MethodPost, base, "application/json",
		[]byte(`{"apiVersion":"upload.cdi.kubevirt.io/v1beta1","kind":"UploadTokenRequest","metadata":{"name":"t"},"spec":{}}`)); r.code != http.StatusUnprocessableEntity ||
		!strings.Contains(r.body, "spec.pvcName") {
		t.Errorf("no pvcName: %d %s, want 422 naming spec.pvcName", r.code, truncate(r.body))
	}
	if r := do(t, client, http.MethodPost, base+"?fieldValidation=Strict", "application/json",
		[]byte(`{"apiVersion":"upload.cdi.kubevirt.io/v1beta1","kind":"UploadTokenRequest","metadata":{"name":"t"},"spec":{"pvcName":"x","ttl":"1h"}}`)); r.code != http.StatusBadRequest ||
		!strings.Contains(r.body, "ttl") {
		t.Errorf("unknown field: %d %s, want 400 naming ttl", r.code, truncate(r.body))
	}
	// Create only: nothing to list or read back.
	for _, m := range []string{http.MethodGet} {
		if r := do(t, client, m, base, "", nil); r.code != http.StatusMethodNotAllowed && r.code != http.StatusNotFound {
			t.Errorf("%s: %d, want 405 or 404", m, r.code)
		}
	}
}

func writeKey(path string) error {
	return writeFile(path, strings.Repeat("0123456789abcdef", 3))
}

// TestCDIDiscoveryTablesOpenAPI: discovery lists both groups with CDI's short names, scopes and
// categories; `kubectl get dv` shows CDI's columns; OpenAPI describes DataVolume (what
// `kubectl explain dv.spec.source.http` reads).
func TestCDIDiscoveryTablesOpenAPI(t *testing.T) {
	srv := framework.Start(t, "")
	dc, err := discovery.NewDiscoveryClientForConfig(srv.Config)
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
	for _, gv := range []string{"cdi.kubevirt.io/v1beta1", "upload.cdi.kubevirt.io/v1beta1"} {
		list, err := dc.ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("%s: %v", gv, err)
		}
		for _, r := range list.APIResources {
			got[r.Name] = resourceInfo{r.Kind, r.Namespaced, r.ShortNames, r.Categories}
			if r.Name == "uploadtokenrequests" && !slices.Equal(r.Verbs, metav1.Verbs{"create"}) {
				t.Errorf("uploadtokenrequests verbs %v, want create", r.Verbs)
			}
		}
	}
	want := map[string]resourceInfo{
		"datavolumes":            {"DataVolume", true, []string{"dv", "dvs"}, []string{"all"}},
		"datavolumes/status":     {"DataVolume", true, nil, nil},
		"datasources":            {"DataSource", true, []string{"das"}, []string{"all"}},
		"datasources/status":     {"DataSource", true, nil, nil},
		"storageprofiles":        {"StorageProfile", false, nil, nil},
		"storageprofiles/status": {"StorageProfile", false, nil, nil},
		"cdiconfigs":             {"CDIConfig", false, nil, nil},
		"cdiconfigs/status":      {"CDIConfig", false, nil, nil},
		"uploadtokenrequests":    {"UploadTokenRequest", true, nil, nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("discovery (-want +got):\n%s", diff)
	}

	t.Run("tables", func(t *testing.T) {
		ctx := context.Background()
		c := srv.Clientset(t).CdiV1beta1()
		dv, err := c.DataVolumes(ns).Create(ctx, httpDataVolume("t"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dv.Status = cdiv1beta1.DataVolumeStatus{Phase: cdiv1beta1.ImportInProgress, Progress: "12.50%", RestartCount: 2}
		if _, err := c.DataVolumes(ns).UpdateStatus(ctx, dv, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.StorageProfiles().Create(ctx, &cdiv1beta1.StorageProfile{ObjectMeta: metav1.ObjectMeta{Name: "t"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		client := srv.HTTPClient(t)
		for path, wantCols := range map[string][]string{
			"/namespaces/default/datavolumes":   {"Name", "Phase", "Progress", "Restarts", "Age"},
			"/namespaces/default/datavolumes/t": {"Name", "Phase", "Progress", "Restarts", "Age"},
			"/storageprofiles":                  {"Name", "Age"},
		} {
			req, _ := http.NewRequest(http.MethodGet, srv.Config.Host+cdiGroup+path, nil)
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
			if diff := cmp.Diff(wantCols, cols); diff != "" {
				t.Errorf("%s columns (-want +got):\n%s", path, diff)
			}
			if len(table.Rows) != 1 || table.Rows[0].Cells[0] != "t" {
				t.Fatalf("%s rows %v, want one named t", path, table.Rows)
			}
			if strings.Contains(path, "datavolumes") {
				if diff := cmp.Diff([]interface{}{"t", "ImportInProgress", "12.50%", float64(2)}, table.Rows[0].Cells[:4]); diff != "" {
					t.Errorf("%s cells (-want +got):\n%s", path, diff)
				}
			}
		}
	})

	t.Run("openapi", func(t *testing.T) {
		const prefix = "com.github.nativevirt.nativevirt.pkg.apis.cdi.v1beta1."
		var v3 struct {
			Components struct {
				Schemas map[string]openAPISchema `json:"schemas"`
			} `json:"components"`
		}
		getJSON(t, srv, "/openapi/v3/apis/cdi.kubevirt.io/v1beta1", &v3)
		var v2 struct {
			Definitions map[string]openAPISchema `json:"definitions"`
		}
		getJSON(t, srv, "/openapi/v2", &v2)
		for doc, schemas := range map[string]map[string]openAPISchema{"v3": v3.Components.Schemas, "v2": v2.Definitions} {
			for _, kind := range []string{"DataVolume", "DataSource", "StorageProfile", "CDIConfig"} {
				def, ok := schemas[prefix+kind]
				if !ok {
					t.Errorf("%s: no definition of %s", doc, kind)
					continue
				}
				want := []map[string]string{{"group": "cdi.kubevirt.io", "version": "v1beta1", "kind": kind}}
				if diff := cmp.Diff(want, def.GVK); diff != "" || def.Description == "" {
					t.Errorf("%s: %s description %q, x-kubernetes-group-version-kind (-want +got):\n%s", doc, kind, def.Description, diff)
				}
			}
			// dv.spec.source.http.url, as kubectl explain walks to it.
			if schemas[prefix+"DataVolumeSourceHTTP"].Properties["url"].Description == "" {
				t.Errorf("%s: spec.source.http.url has no description", doc)
			}
		}
		var up struct {
			Components struct {
				Schemas map[string]openAPISchema `json:"schemas"`
			} `json:"components"`
		}
		getJSON(t, srv, "/openapi/v3/apis/upload.cdi.kubevirt.io/v1beta1", &up)
		utr, ok := up.Components.Schemas["com.github.nativevirt.nativevirt.pkg.apis.upload.v1beta1.UploadTokenRequest"]
		if !ok {
			t.Error("v3: no definition of UploadTokenRequest")
		}
		// kubectl create validates against the schema: a request carries no status.
		if diff := cmp.Diff([]string{"spec"}, utr.Required); diff != "" {
			t.Errorf("UploadTokenRequest required fields (-want +got):\n%s", diff)
		}
	})
}

func writeFile(path, content string) error {
	return os.WriteFile(path, []byte(content), 0o600)
}

// TestDataVolumeInformer: the generated informer and lister follow DataVolumes (list, then
// watch), as the DataVolume controller will.
func TestDataVolumeInformer(t *testing.T) {
	srv := framework.Start(t, "")
	cs := srv.Clientset(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory := informers.NewSharedInformerFactory(cs, 0)
	dvs := factory.Cdi().V1beta1().DataVolumes()
	phases := make(chan cdiv1beta1.DataVolumePhase, 10)
	if _, err := dvs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { phases <- obj.(*cdiv1beta1.DataVolume).Status.Phase },
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), dvs.Informer().HasSynced) {
		t.Fatal("cache not synced")
	}
	dv, err := cs.CdiV1beta1().DataVolumes(ns).Create(ctx, httpDataVolume("watched"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dv.Status.Phase = cdiv1beta1.Succeeded
	if _, err := cs.CdiV1beta1().DataVolumes(ns).UpdateStatus(ctx, dv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-phases:
		if p != cdiv1beta1.Succeeded {
			t.Errorf("phase %q, want Succeeded", p)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no update seen")
	}
	got, err := dvs.Lister().DataVolumes(ns).Get("watched")
	if err != nil || got.Status.Phase != cdiv1beta1.Succeeded {
		t.Errorf("lister: %v %+v", err, got)
	}
}
