package integration

import (
	"context"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// TestScale reads and writes the replica set's /scale as autoscaling/v1 Scale.
func TestScale(t *testing.T) {
	srv := framework.Start(t, "")
	dyn := srv.Dynamic(t)
	ctx := context.Background()
	createFromYAML(t, dyn, framework.VMIRS, framework.VMIRSYAML("web", 2))
	client := dyn.Resource(framework.VMIRS).Namespace(ns)

	scale, err := client.Get(ctx, "web", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatalf("get scale: %v", err)
	}
	if scale.GetKind() != "Scale" || scale.GetAPIVersion() != "autoscaling/v1" {
		t.Fatalf("scale kind = %s %s, want autoscaling/v1 Scale", scale.GetAPIVersion(), scale.GetKind())
	}
	if r, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas"); r != 2 {
		t.Fatalf("scale spec.replicas = %d, want 2", r)
	}
	if sel, _, _ := unstructured.NestedString(scale.Object, "status", "selector"); sel != "rs=web" {
		t.Fatalf("scale status.selector = %q, want rs=web", sel)
	}

	_ = unstructured.SetNestedField(scale.Object, int64(5), "spec", "replicas")
	if _, err := client.Update(ctx, scale, metav1.UpdateOptions{}, "scale"); err != nil {
		t.Fatalf("update scale: %v", err)
	}
	if _, err := client.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatalf("patch scale: %v", err)
	}
	rs, err := client.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if r, _, _ := unstructured.NestedInt64(rs.Object, "spec", "replicas"); r != 3 {
		t.Fatalf("spec.replicas after scaling = %d, want 3", r)
	}

	_, err = client.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":-1}}`), metav1.PatchOptions{}, "scale")
	if !apierrors.IsInvalid(err) {
		t.Fatalf("negative replicas: want 422 Invalid, got %v", err)
	}
	var typed autoscalingv1.Scale
	raw, _ := scale.MarshalJSON()
	if err := yaml.Unmarshal(raw, &typed); err != nil || typed.Name != "web" {
		t.Fatalf("scale does not decode as autoscaling/v1: %v", err)
	}
}

// TestListMergeKeys: strategic merge patch and server-side apply merge disks and volumes by name
// instead of replacing the lists (KubeVirt's own types cannot do this).
func TestListMergeKeys(t *testing.T) {
	srv := framework.Start(t, "")
	dyn := srv.Dynamic(t)
	ctx := context.Background()
	client := dyn.Resource(framework.VMs).Namespace(ns)

	// The first manager applies the whole VM.
	vm := framework.Object(t, framework.VMYAML("merge"))
	if _, err := client.Apply(ctx, "merge", vm, metav1.ApplyOptions{FieldManager: "owner"}); err != nil {
		t.Fatalf("apply by owner: %v", err)
	}

	// A strategic merge patch adds a disk and a volume; the others stay.
	smp := `{"spec":{"template":{"spec":{
	  "domain":{"devices":{"disks":[{"name":"extra","disk":{"bus":"virtio"}}]}},
	  "volumes":[{"name":"extra","emptyDisk":{"capacity":"2Gi"}}]}}}}`
	out, err := client.Patch(ctx, "merge", types.StrategicMergePatchType, []byte(smp), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("strategic merge patch: %v", err)
	}
	// Strategic merge patch puts new list entries first; what matters is that none is lost.
	if diff := cmp.Diff([]string{"cloudinitdisk", "containerdisk", "extra", "scratch"}, names(t, out, "spec", "template", "spec", "volumes")); diff != "" {
		t.Fatalf("volumes after SMP (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cloudinitdisk", "containerdisk", "extra", "scratch"}, names(t, out, "spec", "template", "spec", "domain", "devices", "disks")); diff != "" {
		t.Fatalf("disks after SMP (-want +got):\n%s", diff)
	}

	// A second SSA manager adds one more volume and disk by name; nothing is replaced.
	second := framework.Object(t, `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: merge
spec:
  template:
    spec:
      domain:
        devices:
          disks:
          - name: second
            disk:
              bus: virtio
      volumes:
      - name: second
        emptyDisk:
          capacity: 1Gi
`)
	out, err = client.Apply(ctx, "merge", second, metav1.ApplyOptions{FieldManager: "second"})
	if err != nil {
		t.Fatalf("apply by second manager: %v", err)
	}
	if diff := cmp.Diff([]string{"cloudinitdisk", "containerdisk", "extra", "scratch", "second"}, names(t, out, "spec", "template", "spec", "volumes")); diff != "" {
		t.Fatalf("volumes after second SSA manager (-want +got):\n%s", diff)
	}
	managers := map[string]bool{}
	for _, mf := range out.GetManagedFields() {
		managers[mf.Manager] = true
	}
	if !managers["owner"] || !managers["second"] {
		t.Fatalf("managed fields lack a manager: %v", managers)
	}

	// The first manager re-applies its manifest: a conflict-free round trip that keeps the
	// second manager's volume (it owns it, keyed by name).
	out, err = client.Apply(ctx, "merge", vm, metav1.ApplyOptions{FieldManager: "owner"})
	if err != nil {
		t.Fatalf("re-apply by owner: %v", err)
	}
	got := names(t, out, "spec", "template", "spec", "volumes")
	if !contains(got, "second") || !contains(got, "containerdisk") {
		t.Fatalf("re-apply lost volumes: %v", got)
	}

	// Changing a field the owner manages, by another manager, conflicts.
	conflict := framework.Object(t, `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: merge
spec:
  runStrategy: Always
`)
	if _, err := client.Apply(ctx, "merge", conflict, metav1.ApplyOptions{FieldManager: "intruder"}); !apierrors.IsConflict(err) {
		t.Fatalf("apply of an owned field by another manager: want 409 Conflict, got %v", err)
	}
}

func names(t *testing.T, obj *unstructured.Unstructured, path ...string) []string {
	t.Helper()
	items, _, err := unstructured.NestedSlice(obj.Object, path...)
	if err != nil {
		t.Fatalf("%v: %v", path, err)
	}
	var out []string
	for _, it := range items {
		out = append(out, it.(map[string]interface{})["name"].(string))
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
