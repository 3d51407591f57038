package integration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// TestStatusIsolation: spec changes through /status are ignored, status changes through the main
// resource are ignored, for every resource.
func TestStatusIsolation(t *testing.T) {
	srv := framework.Start(t, "")
	dyn := srv.Dynamic(t)
	ctx := context.Background()
	statusOf := map[string]map[string]interface{}{
		"VirtualMachine":                   {"printableStatus": "Running", "ready": true},
		"VirtualMachineInstance":           {"phase": "Scheduling"},
		"VirtualMachineInstanceReplicaSet": {"replicas": int64(2), "readyReplicas": int64(1)},
		"VirtualMachineInstanceMigration":  {"phase": "Pending"},
	}
	for _, rc := range resourceCases() {
		t.Run(rc.name, func(t *testing.T) {
			client := dyn.Resource(rc.gvr).Namespace(ns)
			rc.prepare(t, dyn, "iso")
			obj := createFromYAML(t, dyn, rc.gvr, rc.manifest("iso"))
			specBefore := obj.DeepCopy().Object["spec"]

			// Through /status: the status lands, a spec change and a label change do not.
			obj.Object["status"] = statusOf[rc.name]
			obj.SetLabels(map[string]string{"through": "status"})
			mutateSpec(obj)
			out, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update status: %v", err)
			}
			for k, v := range statusOf[rc.name] {
				if got := out.Object["status"].(map[string]interface{})[k]; got != v {
					t.Errorf("status.%s = %v, want %v", k, got, v)
				}
			}
			if !equalJSON(t, out.Object["spec"], specBefore) {
				t.Errorf("a spec change through /status was kept")
			}
			if out.GetLabels()["through"] == "status" {
				t.Errorf("a label change through /status was kept")
			}

			// Through the main resource: a status change is ignored.
			patch := `{"status":{"phase":"Failed","printableStatus":"Stopped","replicas":9}}`
			out, err = client.Patch(ctx, "iso", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			if err != nil {
				t.Fatalf("patch main resource: %v", err)
			}
			for k, v := range statusOf[rc.name] {
				if got := out.Object["status"].(map[string]interface{})[k]; got != v {
					t.Errorf("after a status write through the main resource: status.%s = %v, want %v", k, got, v)
				}
			}
		})
	}
}

// mutateSpec changes one field of the spec of any of the four kinds.
func mutateSpec(obj *unstructured.Unstructured) {
	switch obj.GetKind() {
	case "VirtualMachineInstanceMigration":
		_ = unstructured.SetNestedField(obj.Object, "another-vmi", "spec", "vmiName")
	case "VirtualMachineInstanceReplicaSet":
		_ = unstructured.SetNestedField(obj.Object, int64(7), "spec", "replicas")
	case "VirtualMachine":
		_ = unstructured.SetNestedField(obj.Object, "Always", "spec", "runStrategy")
	default:
		_ = unstructured.SetNestedField(obj.Object, "another-host", "spec", "hostname")
	}
}
