package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// TestFieldSelectors: metadata.name, status.phase and status.nodeName on VMIs, spec.vmiName and
// status.phase on migrations, served natively (the node agent relies on status.nodeName).
func TestFieldSelectors(t *testing.T) {
	srv := framework.Start(t, "")
	dyn := srv.Dynamic(t)
	ctx := context.Background()
	vmis := dyn.Resource(framework.VMIs).Namespace(ns)
	for _, v := range []struct{ name, phase, node string }{
		{"a", "Running", "node-1"}, {"b", "Running", "node-2"}, {"c", "Scheduling", ""},
	} {
		obj := createFromYAML(t, dyn, framework.VMIs, framework.VMIYAML(v.name))
		obj.Object["status"] = map[string]interface{}{"phase": v.phase, "nodeName": v.node}
		if _, err := vmis.UpdateStatus(ctx, obj, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update status of %s: %v", v.name, err)
		}
	}
	createFromYAML(t, dyn, framework.VMIMs, framework.VMIMYAML("m1", "a"))
	createFromYAML(t, dyn, framework.VMIMs, framework.VMIMYAML("m2", "b"))

	cases := []struct {
		gvr      schema.GroupVersionResource
		selector string
		want     []string
	}{
		{framework.VMIs, "status.phase=Running", []string{"a", "b"}},
		{framework.VMIs, "status.nodeName=node-2", []string{"b"}},
		{framework.VMIs, "status.phase!=Running", []string{"c"}},
		{framework.VMIs, "metadata.name=c", []string{"c"}},
		{framework.VMIs, "metadata.namespace=default,status.nodeName=node-1", []string{"a"}},
		{framework.VMIMs, "spec.vmiName=b", []string{"m2"}},
	}
	for _, c := range cases {
		list, err := dyn.Resource(c.gvr).Namespace(ns).List(ctx, metav1.ListOptions{FieldSelector: c.selector})
		if err != nil {
			t.Fatalf("list %s --field-selector %s: %v", c.gvr.Resource, c.selector, err)
		}
		var got []string
		for _, it := range list.Items {
			got = append(got, it.GetName())
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s --field-selector %s (-want +got):\n%s", c.gvr.Resource, c.selector, diff)
		}
	}
	// Also through v1alpha3, which needs its own field label conversion.
	alpha := framework.VMIs
	alpha.Version = "v1alpha3"
	list, err := dyn.Resource(alpha).Namespace(ns).List(ctx, metav1.ListOptions{FieldSelector: "status.nodeName=node-1"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("v1alpha3 field selector: err=%v items=%d", err, len(list.Items))
	}
	_, err = vmis.List(ctx, metav1.ListOptions{FieldSelector: "spec.hostname=x"})
	if !apierrors.IsBadRequest(err) {
		t.Fatalf("unsupported field selector: want 400, got %v", err)
	}
}

// TestTables: `kubectl get` columns as KubeVirt shows them, with descriptions.
func TestTables(t *testing.T) {
	srv := framework.Start(t, "")
	dyn := srv.Dynamic(t)
	ctx := context.Background()
	createFromYAML(t, dyn, framework.VMs, framework.VMYAML("t"))
	vmi := createFromYAML(t, dyn, framework.VMIs, framework.VMIYAML("t"))
	vmi.Object["status"] = map[string]interface{}{
		"phase": "Running", "nodeName": "node-1",
		"interfaces": []interface{}{map[string]interface{}{"name": "default", "ipAddress": "10.88.0.7"}},
		"conditions": []interface{}{map[string]interface{}{"type": "Ready", "status": "True"}},
	}
	if _, err := dyn.Resource(framework.VMIs).Namespace(ns).UpdateStatus(ctx, vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status: %v", err)
	}
	createFromYAML(t, dyn, framework.VMIRS, framework.VMIRSYAML("t", 3))
	createFromYAML(t, dyn, framework.VMIMs, framework.VMIMYAML("t", "t"))

	cases := []struct {
		resource string
		columns  []string
		cells    []interface{} // after NAME, with AGE omitted
	}{
		{"virtualmachines", []string{"Name", "Age", "Status", "Ready"}, []interface{}{"", "False"}},
		{"virtualmachineinstances", []string{"Name", "Age", "Phase", "IP", "NodeName", "Ready"}, []interface{}{"Running", "10.88.0.7", "node-1", "True"}},
		{"virtualmachineinstancereplicasets", []string{"Name", "Desired", "Current", "Ready", "Age"}, []interface{}{float64(3), float64(0), float64(0)}},
		{"virtualmachineinstancemigrations", []string{"Name", "Phase", "VMI", "Age"}, []interface{}{"", "t"}},
	}
	client := srv.HTTPClient(t)
	for _, c := range cases {
		for _, path := range []string{"/apis/kubevirt.io/v1/namespaces/default/" + c.resource, "/apis/kubevirt.io/v1/namespaces/default/" + c.resource + "/t"} {
			req, _ := http.NewRequest(http.MethodGet, srv.Config.Host+path, nil)
			req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s as Table: %s %s", path, resp.Status, body)
			}
			var table metav1.Table
			if err := json.Unmarshal(body, &table); err != nil {
				t.Fatalf("decode table: %v", err)
			}
			var cols []string
			for _, col := range table.ColumnDefinitions {
				cols = append(cols, col.Name)
				if col.Description == "" {
					t.Errorf("%s: column %s has no description", c.resource, col.Name)
				}
			}
			if diff := cmp.Diff(c.columns, cols); diff != "" {
				t.Fatalf("%s columns (-want +got):\n%s", c.resource, diff)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("%s: %d rows, want 1", c.resource, len(table.Rows))
			}
			var cells []interface{}
			for i, cell := range table.Rows[0].Cells {
				if cols[i] != "Name" && cols[i] != "Age" {
					cells = append(cells, cell)
				}
			}
			if diff := cmp.Diff(c.cells, cells); diff != "" {
				t.Errorf("%s cells (-want +got):\n%s", c.resource, diff)
			}
			// The row's object is the metadata (kubectl's default) without managedFields.
			var row metav1.PartialObjectMetadata
			if err := json.Unmarshal(table.Rows[0].Object.Raw, &row); err != nil {
				t.Fatalf("%s: decode the row's object: %v", c.resource, err)
			}
			if row.Kind != "PartialObjectMetadata" || row.Name != "t" || row.UID == "" {
				t.Errorf("%s: row object %s %q uid %q, want the object's PartialObjectMetadata", c.resource, row.Kind, row.Name, row.UID)
			}
			if len(row.ManagedFields) != 0 {
				t.Errorf("%s: the row's metadata carries %d managedFields entries", c.resource, len(row.ManagedFields))
			}
		}
	}
}

// TestOpenAPI: v2 and v3 publish our definitions with descriptions, the group-version-kinds
// name only served versions, and runStrategy is explained.
func TestOpenAPI(t *testing.T) {
	srv := framework.Start(t, "")
	client := srv.HTTPClient(t)
	get := func(path string) []byte {
		resp, err := client.Get(srv.Config.Host + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return body
	}
	v2 := get("/openapi/v2")
	if strings.Contains(string(v2), "__internal") {
		t.Errorf("/openapi/v2 mentions the internal version")
	}
	var doc struct {
		Definitions map[string]struct {
			Description string                            `json:"description"`
			Properties  map[string]map[string]interface{} `json:"properties"`
			GVK         []map[string]string               `json:"x-kubernetes-group-version-kind"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(v2, &doc); err != nil {
		t.Fatalf("decode /openapi/v2: %v", err)
	}
	const prefix = "com.github.nativevirt.nativevirt.pkg.apis.kubevirt.v1."
	for _, kind := range []string{"VirtualMachine", "VirtualMachineInstance", "VirtualMachineInstanceReplicaSet", "VirtualMachineInstanceMigration"} {
		def, ok := doc.Definitions[prefix+kind]
		if !ok {
			t.Fatalf("definition %s%s missing", prefix, kind)
		}
		if def.Description == "" {
			t.Errorf("%s has no description", kind)
		}
		var versions []string
		for _, gvk := range def.GVK {
			versions = append(versions, gvk["group"]+"/"+gvk["version"])
		}
		if diff := cmp.Diff([]string{"kubevirt.io/v1", "kubevirt.io/v1alpha3"}, versions); diff != "" {
			t.Errorf("%s x-kubernetes-group-version-kind (-want +got):\n%s", kind, diff)
		}
	}
	if d := doc.Definitions[prefix+"VirtualMachineSpec"].Properties["runStrategy"]["description"]; d == nil || d == "" {
		t.Errorf("spec.runStrategy has no description")
	}
	if _, ok := doc.Definitions["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]; !ok {
		t.Errorf("io.k8s.apimachinery ObjectMeta definition missing")
	}
	v3 := get("/openapi/v3/apis/kubevirt.io/v1")
	if !strings.Contains(string(v3), prefix+"VirtualMachine") || strings.Contains(string(v3), "__internal") {
		t.Errorf("/openapi/v3/apis/kubevirt.io/v1 lacks our definitions or mentions __internal")
	}
	get("/openapi/v3/apis/kubevirt.io/v1alpha3")
}

// TestVersions: an object written as v1alpha3 is read as v1 and back, and stored as v1.
func TestVersions(t *testing.T) {
	srv := framework.Start(t, "")
	dyn := srv.Dynamic(t)
	ctx := context.Background()
	alpha := framework.VMs
	alpha.Version = "v1alpha3"
	seed := framework.Object(t, seedVM)
	created, err := dyn.Resource(alpha).Namespace(ns).Create(ctx, seed, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create v1alpha3 seed VM: %v", err)
	}
	if created.GetAPIVersion() != "kubevirt.io/v1alpha3" {
		t.Fatalf("create through v1alpha3 answered %s", created.GetAPIVersion())
	}
	v1obj, err := dyn.Resource(framework.VMs).Namespace(ns).Get(ctx, "vm-cirros", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get as v1: %v", err)
	}
	if v1obj.GetAPIVersion() != "kubevirt.io/v1" {
		t.Fatalf("get through v1 answered %s", v1obj.GetAPIVersion())
	}
	if !equalJSON(t, created.Object["spec"], v1obj.Object["spec"]) {
		t.Fatalf("spec differs between v1alpha3 and v1")
	}
	running, _, _ := unstructured.NestedBool(v1obj.Object, "spec", "running")
	if running {
		t.Fatalf("spec.running = true, want the seed's false")
	}
	_ = unstructured.SetNestedField(v1obj.Object, "through v1", "metadata", "annotations", "edited")
	if _, err := dyn.Resource(framework.VMs).Namespace(ns).Update(ctx, v1obj, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update as v1: %v", err)
	}
	back, err := dyn.Resource(alpha).Namespace(ns).Get(ctx, "vm-cirros", metav1.GetOptions{})
	if err != nil || back.GetAnnotations()["edited"] != "through v1" || back.GetAPIVersion() != "kubevirt.io/v1alpha3" {
		t.Fatalf("read back as v1alpha3: err=%v apiVersion=%s annotations=%v", err, back.GetAPIVersion(), back.GetAnnotations())
	}
}

// seedVM is the v1alpha3 manifest of KubeVirt's user guide (the project's seed).
const seedVM = `apiVersion: kubevirt.io/v1alpha3
kind: VirtualMachine
metadata:
  labels:
    kubevirt.io/vm: vm-cirros
  name: vm-cirros
spec:
  running: false
  template:
    metadata:
      labels:
        kubevirt.io/vm: vm-cirros
    spec:
      domain:
        devices:
          disks:
          - disk:
              bus: virtio
            name: containerdisk
          - disk:
              bus: virtio
            name: cloudinitdisk
        machine:
          type: ""
        resources:
          requests:
            memory: 64M
      terminationGracePeriodSeconds: 0
      volumes:
      - name: containerdisk
        containerDisk:
          image: kubevirt/cirros-container-disk-demo:latest
      - cloudInitNoCloud:
          userDataBase64: IyEvYmluL3NoCgplY2hvICdwcmludGVkIGZyb20gY2xvdWQtaW5pdCB1c2VyZGF0YScK
        name: cloudinitdisk
`
