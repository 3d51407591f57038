package integration

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/nativevirt/nativevirt/test/integration/framework"
)

const ns = "default"

type resourceCase struct {
	name     string
	gvr      schema.GroupVersionResource
	manifest func(name string) string
	// labelPath is a field every patch type changes, read back to check the patch landed.
	labelKey string
	// serverFinalizer is a finalizer the server adds at creation; the test removes it after
	// the delete, as the controller that owns it would.
	serverFinalizer string
}

func resourceCases() []resourceCase {
	return []resourceCase{
		{name: "VirtualMachine", gvr: framework.VMs, manifest: framework.VMYAML, labelKey: "patched"},
		{name: "VirtualMachineInstance", gvr: framework.VMIs, manifest: framework.VMIYAML, labelKey: "patched",
			serverFinalizer: "kubevirt.io/virtualMachineControllerFinalize"},
		{name: "VirtualMachineInstanceReplicaSet", gvr: framework.VMIRS, manifest: func(n string) string { return framework.VMIRSYAML(n, 2) }, labelKey: "patched"},
		// A migration of the instance of the same name: the server refuses one of an instance
		// that does not exist, and a second one in flight for the same instance.
		{name: "VirtualMachineInstanceMigration", gvr: framework.VMIMs, manifest: func(n string) string { return framework.VMIMYAML(n, n) },
			labelKey: "patched", serverFinalizer: "kubevirt.io/migrationJobFinalize"},
	}
}

// prepare creates what an object of the case needs to be accepted: the instance a migration
// names (unless an earlier case created it).
func (rc resourceCase) prepare(t *testing.T, dyn dynamic.Interface, name string) {
	t.Helper()
	if rc.gvr != framework.VMIMs {
		return
	}
	_, err := dyn.Resource(framework.VMIs).Namespace(ns).Create(context.Background(), framework.Object(t, framework.VMIYAML(name)), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create the instance %s: %v", name, err)
	}
}

// TestCRUD drives create/get/list/watch/update/patch (all four kinds)/delete on every resource
// through client-go's dynamic client.
func TestCRUD(t *testing.T) {
	srv := framework.Start(t, "")
	dyn := srv.Dynamic(t)
	for _, rc := range resourceCases() {
		t.Run(rc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			client := dyn.Resource(rc.gvr).Namespace(ns)

			w, err := client.Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()

			rc.prepare(t, dyn, "crud")
			created, err := client.Create(ctx, framework.Object(t, rc.manifest("crud")), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if created.GetUID() == "" || created.GetResourceVersion() == "" {
				t.Fatalf("create returned no uid/resourceVersion: %v", created.Object["metadata"])
			}
			if _, err := client.Create(ctx, framework.Object(t, rc.manifest("crud")), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
				t.Fatalf("second create: want AlreadyExists, got %v", err)
			}

			got, err := client.Get(ctx, "crud", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if diff := cmp.Diff(created.Object["spec"], got.Object["spec"]); diff != "" {
				t.Fatalf("get returned a different spec (-created +got):\n%s", diff)
			}

			list, err := client.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if len(list.Items) != 1 || list.Items[0].GetName() != "crud" {
				t.Fatalf("list: want [crud], got %d items", len(list.Items))
			}

			got.SetAnnotations(map[string]string{"updated": "yes"})
			updated, err := client.Update(ctx, got, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			if updated.GetAnnotations()["updated"] != "yes" {
				t.Fatalf("update lost the annotation: %v", updated.GetAnnotations())
			}
			stale := got.DeepCopy()
			stale.SetAnnotations(map[string]string{"stale": "yes"})
			if _, err := client.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Fatalf("update with a stale resourceVersion: want Conflict, got %v", err)
			}

			patches := []struct {
				pt    types.PatchType
				body  string
				value string
			}{
				{types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/patched","value":"json"}]`, "json"},
				{types.MergePatchType, `{"metadata":{"labels":{"patched":"merge"}}}`, "merge"},
				{types.StrategicMergePatchType, `{"metadata":{"labels":{"patched":"strategic"}}}`, "strategic"},
			}
			for _, p := range patches {
				out, err := client.Patch(ctx, "crud", p.pt, []byte(p.body), metav1.PatchOptions{})
				if err != nil {
					t.Fatalf("%s patch: %v", p.pt, err)
				}
				if out.GetLabels()[rc.labelKey] != p.value {
					t.Fatalf("%s patch: label = %q, want %q", p.pt, out.GetLabels()[rc.labelKey], p.value)
				}
			}
			apply := &unstructured.Unstructured{Object: map[string]interface{}{
				"apiVersion": "kubevirt.io/v1",
				"kind":       created.GetKind(),
				"metadata":   map[string]interface{}{"name": "crud", "labels": map[string]interface{}{"applied": "yes"}},
			}}
			out, err := client.Apply(ctx, "crud", apply, metav1.ApplyOptions{FieldManager: "integration-test", Force: true})
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			if out.GetLabels()["applied"] != "yes" || out.GetLabels()[rc.labelKey] != "strategic" {
				t.Fatalf("apply: labels = %v, want applied=yes and the earlier patch kept", out.GetLabels())
			}

			if err := client.Delete(ctx, "crud", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			wantEvents := []watch.EventType{watch.Added, watch.Modified, watch.Modified, watch.Modified, watch.Modified, watch.Modified}
			if rc.serverFinalizer != "" {
				// The finalizer keeps the object, marked for deletion, until its owner lets go.
				held, err := client.Get(ctx, "crud", metav1.GetOptions{})
				if err != nil || held.GetDeletionTimestamp() == nil || !cmp.Equal(held.GetFinalizers(), []string{rc.serverFinalizer}) {
					t.Fatalf("after delete: want the object held by %s, got %v (err %v)", rc.serverFinalizer, held, err)
				}
				if _, err := client.Patch(ctx, "crud", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
					t.Fatalf("remove the finalizer: %v", err)
				}
				wantEvents = append(wantEvents, watch.Modified)
			}
			if _, err := client.Get(ctx, "crud", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("get after delete: want NotFound, got %v", err)
			}
			wantEvents = append(wantEvents, watch.Deleted)
			var gotEvents []watch.EventType
			for len(gotEvents) < len(wantEvents) {
				select {
				case ev := <-w.ResultChan():
					gotEvents = append(gotEvents, ev.Type)
				case <-ctx.Done():
					t.Fatalf("watch: got %v before timeout, want %v", gotEvents, wantEvents)
				}
			}
			if diff := cmp.Diff(wantEvents, gotEvents); diff != "" {
				t.Fatalf("watch events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTypedClient exercises the generated clientset on VirtualMachines.
func TestTypedClient(t *testing.T) {
	srv := framework.Start(t, "")
	ctx := context.Background()
	cs := srv.Clientset(t)
	dyn := srv.Dynamic(t)
	createFromYAML(t, dyn, framework.VMs, framework.VMYAML("typed"))

	vm, err := cs.KubevirtV1().VirtualMachines(ns).Get(ctx, "typed", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("typed get: %v", err)
	}
	if vm.Spec.Template == nil || len(vm.Spec.Template.Spec.Domain.Devices.Disks) != 3 {
		t.Fatalf("typed get: template disks not decoded: %+v", vm.Spec.Template)
	}
	if vm.Spec.Template.Spec.Domain.Firmware == nil || vm.Spec.Template.Spec.Domain.Firmware.UUID == "" {
		t.Fatalf("firmware UUID was not defaulted")
	}
	list, err := cs.KubevirtV1().VirtualMachines(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("typed list: %v, %d items", err, len(list.Items))
	}
}

func createFromYAML(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, manifest string) *unstructured.Unstructured {
	t.Helper()
	out, err := dyn.Resource(gvr).Namespace(ns).Create(context.Background(), framework.Object(t, manifest), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", gvr.Resource, err)
	}
	return out
}
