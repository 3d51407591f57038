/*
Copyright The NativeVirt Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

// apiServices are the group versions kube-apiserver routes to nativevirt-apiserver.
var apiServices = []string{"v1.kubevirt.io", "v1alpha3.kubevirt.io", "v1.subresources.kubevirt.io", "v1beta1.instancetype.kubevirt.io"}

// TestAggregationAPIServicesAvailable reads the APIServices with client-go: each points at the
// nativevirt-apiserver Service, verifies TLS with a caBundle (never insecureSkipTLSVerify) and
// is Available.
func TestAggregationAPIServicesAvailable(t *testing.T) {
	c := requireNativeVirt(t)
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	c.KubectlFor(t, framework.AdminUser).MustRun(append([]string{"get", "apiservices"}, apiServices...)...)

	type summary struct {
		Service         string
		HasCABundle     bool
		SkipTLSVerify   bool
		AvailableStatus string
	}
	for _, name := range apiServices {
		t.Run(name, func(t *testing.T) {
			obj, err := dyn.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ns, _, _ := unstructured.NestedString(obj.Object, "spec", "service", "namespace")
			svc, _, _ := unstructured.NestedString(obj.Object, "spec", "service", "name")
			ca, _, _ := unstructured.NestedString(obj.Object, "spec", "caBundle")
			skip, _, _ := unstructured.NestedBool(obj.Object, "spec", "insecureSkipTLSVerify")
			got := summary{Service: ns + "/" + svc, HasCABundle: ca != "", SkipTLSVerify: skip, AvailableStatus: condition(obj, "Available")}
			want := summary{Service: "nativevirt/nativevirt-apiserver", HasCABundle: true, SkipTLSVerify: false, AvailableStatus: "True"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("APIService %s (-want +got):\n%s", name, diff)
			}
		})
	}
}

// condition is the status of the condition of type typ in obj.status.conditions ("" if absent).
func condition(obj *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]interface{})
		if ok && m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// TestAggregationAPIResources checks what kubectl discovers through kube-apiserver: the four
// kinds of kubevirt.io with KubeVirt's short names, served as v1, and all four group versions.
func TestAggregationAPIResources(t *testing.T) {
	c := requireNativeVirt(t)
	k := c.KubectlFor(t, framework.AdminUser)

	tbl := parseKubectlTable(k.MustRun("api-resources", "--api-group=kubevirt.io"))
	got := tbl.Rows
	sort.Slice(got, func(i, j int) bool { return got[i]["NAME"] < got[j]["NAME"] })
	row := func(name, short, kind string) map[string]string {
		return map[string]string{"NAME": name, "SHORTNAMES": short, "APIVERSION": "kubevirt.io/v1", "NAMESPACED": "true", "KIND": kind}
	}
	want := []map[string]string{
		row("virtualmachineinstancemigrations", "vmim,vmims", "VirtualMachineInstanceMigration"),
		row("virtualmachineinstancereplicasets", "vmirs,vmirss", "VirtualMachineInstanceReplicaSet"),
		row("virtualmachineinstances", "vmi,vmis", "VirtualMachineInstance"),
		row("virtualmachines", "vm,vms", "VirtualMachine"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubectl api-resources --api-group=kubevirt.io (-want +got):\n%s", diff)
	}

	versions := strings.Fields(k.MustRun("api-versions"))
	for _, gv := range []string{"kubevirt.io/v1", "kubevirt.io/v1alpha3", "subresources.kubevirt.io/v1", "instancetype.kubevirt.io/v1beta1"} {
		found := false
		for _, v := range versions {
			found = found || v == gv
		}
		if !found {
			t.Errorf("kubectl api-versions does not list %s", gv)
		}
	}
}

// TestAggregationKubectl walks the seed VM through kubectl's everyday verbs, each answered by
// nativevirt-apiserver through kube-apiserver's aggregation layer. The steps build on each other;
// the first failing one stops the walk.
func TestAggregationKubectl(t *testing.T) {
	c := requireNativeVirt(t)
	ns := testNamespace(t, c, "e2e-kubectl")
	k := c.KubectlFor(t, framework.AdminUser)

	steps := []struct {
		name string
		run  func(t *testing.T, k *framework.Kubectl)
	}{
		{"apply -f the v1alpha3 seed", func(t *testing.T, k *framework.Kubectl) {
			out := k.MustRunInput(seedVMManifest(t), "-n", ns, "apply", "-f", "-")
			if want := "virtualmachine.kubevirt.io/vm-cirros created"; strings.TrimSpace(out) != want {
				t.Errorf("kubectl apply printed %q, want %q", out, want)
			}
		}},
		{"get vm prints the table", func(t *testing.T, k *framework.Kubectl) {
			tbl := parseKubectlTable(k.MustRun("-n", ns, "get", "vm"))
			if diff := cmp.Diff([]string{"NAME", "AGE", "STATUS", "READY"}, tbl.Header); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			var names []string
			for _, r := range tbl.Rows {
				names = append(names, r["NAME"])
			}
			if diff := cmp.Diff([]string{"vm-cirros"}, names); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		}},
		{"get -o yaml returns kubevirt.io/v1", func(t *testing.T, k *framework.Kubectl) {
			vm := getYAML(t, k, "-n", ns, "get", "vm", "vm-cirros", "-o", "yaml")
			got := []interface{}{vm.GetAPIVersion(), vm.GetKind(), field(vm, "spec", "running"), names(vm, "spec", "template", "spec", "domain", "devices", "disks")}
			want := []interface{}{"kubevirt.io/v1", "VirtualMachine", false, []string{"containerdisk", "cloudinitdisk"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("kubectl get -o yaml (-want +got):\n%s", diff)
			}
			alpha := getYAML(t, k, "-n", ns, "get", "virtualmachines.v1alpha3.kubevirt.io", "vm-cirros", "-o", "yaml")
			if alpha.GetAPIVersion() != "kubevirt.io/v1alpha3" || alpha.GetUID() != vm.GetUID() {
				t.Errorf("through v1alpha3: apiVersion %s uid %s, want kubevirt.io/v1alpha3 and uid %s", alpha.GetAPIVersion(), alpha.GetUID(), vm.GetUID())
			}
		}},
		{"explain virtualmachine.spec.runStrategy", func(t *testing.T, k *framework.Kubectl) {
			// The plain form as users type it, then pinned to each version: another group with a
			// VirtualMachine kind (a CRD, say) could otherwise answer the plain form.
			tests := []struct {
				args      []string
				wantGroup string
			}{
				{[]string{"explain", "virtualmachine.spec.runStrategy"}, ""},
				{[]string{"explain", "virtualmachine.spec.runStrategy", "--api-version=kubevirt.io/v1"}, "GROUP: kubevirt.io VERSION: v1"},
				{[]string{"explain", "virtualmachine.spec.runStrategy", "--api-version=kubevirt.io/v1alpha3"}, "GROUP: kubevirt.io VERSION: v1alpha3"},
			}
			for _, tc := range tests {
				out := explain(t, k, tc.args...)
				cmd := "kubectl " + strings.Join(tc.args, " ")
				if !strings.Contains(out, "FIELD: runStrategy <string>") {
					t.Errorf("%s: no FIELD line for runStrategy", cmd)
				}
				if desc := explainDescription(out); len(desc) < 20 {
					t.Errorf("%s: description %q is missing or too short", cmd, desc)
				}
				if head := explainHeader(out); tc.wantGroup != "" && head != tc.wantGroup {
					t.Errorf("%s: header %q, want %q", cmd, head, tc.wantGroup)
				}
			}
		}},
		{"describe vm", func(t *testing.T, k *framework.Kubectl) {
			out := k.MustRun("-n", ns, "describe", "vm", "vm-cirros")
			for _, re := range []string{`(?m)^Name:\s+vm-cirros$`, `(?m)^Namespace:\s+` + ns + `$`, `(?m)^API Version:\s+kubevirt.io/v1$`, `(?m)^Kind:\s+VirtualMachine$`, `(?m)^\s+Name:\s+cloudinitdisk$`} {
				if !regexp.MustCompile(re).MatchString(out) {
					t.Errorf("kubectl describe: no line matching %s", re)
				}
			}
		}},
		{"patch --type=strategic merges named lists", func(t *testing.T, k *framework.Kubectl) {
			// A strategic merge patch adds a disk and a volume by name (a JSON merge patch would
			// replace the lists) and takes over the memory request as manager kubectl-patch.
			patch := `{"metadata":{"labels":{"e2e/patched":"strategic"}},"spec":{"template":{"spec":{` +
				`"domain":{"resources":{"requests":{"memory":"96M"}},"devices":{"disks":[{"name":"scratch","disk":{"bus":"virtio"}}]}},` +
				`"volumes":[{"name":"scratch","emptyDisk":{"capacity":"1Gi"}}]}}}}`
			k.MustRun("-n", ns, "patch", "vm", "vm-cirros", "--type=strategic", "-p", patch)
			vm := getYAML(t, k, "-n", ns, "get", "vm", "vm-cirros", "-o", "yaml")
			// Order aside (a strategic merge puts the patch's new items first), every disk and
			// volume must still be there.
			got := []interface{}{
				vm.GetLabels()["e2e/patched"],
				field(vm, "spec", "template", "spec", "domain", "resources", "requests", "memory"),
				sorted(names(vm, "spec", "template", "spec", "domain", "devices", "disks")),
				sorted(names(vm, "spec", "template", "spec", "volumes")),
			}
			want := []interface{}{"strategic", "96M", []string{"cloudinitdisk", "containerdisk", "scratch"}, []string{"cloudinitdisk", "containerdisk", "scratch"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("after the strategic merge patch (-want +got):\n%s", diff)
			}
		}},
		{"apply --server-side conflicts, then forces", func(t *testing.T, k *framework.Kubectl) {
			manifest := "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm-cirros\n  labels:\n    e2e/ssa: owned\n" +
				"spec:\n  template:\n    spec:\n      domain:\n        resources:\n          requests:\n            memory: 128M\n"
			_, err := k.RunInput(manifest, "-n", ns, "apply", "--server-side", "--field-manager=e2e-ssa", "-f", "-")
			if err == nil || !strings.Contains(err.Error(), "conflict") || !strings.Contains(err.Error(), "kubectl-patch") {
				t.Errorf("server-side apply over kubectl-patch's memory request: err = %v, want a conflict with kubectl-patch", err)
			}
			k.MustRunInput(manifest, "-n", ns, "apply", "--server-side", "--field-manager=e2e-ssa", "--force-conflicts", "-f", "-")
			vm := getYAML(t, k, "-n", ns, "get", "vm", "vm-cirros", "-o", "yaml", "--show-managed-fields")
			var managers []string
			for _, mf := range vm.GetManagedFields() {
				if mf.Operation == metav1.ManagedFieldsOperationApply {
					managers = append(managers, mf.Manager)
				}
			}
			got := []interface{}{vm.GetLabels()["e2e/ssa"], field(vm, "spec", "template", "spec", "domain", "resources", "requests", "memory"), managers,
				sorted(names(vm, "spec", "template", "spec", "domain", "devices", "disks"))}
			want := []interface{}{"owned", "128M", []string{"e2e-ssa"}, []string{"cloudinitdisk", "containerdisk", "scratch"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("after server-side apply (-want +got):\n%s", diff)
			}
		}},
		{"get vmi --field-selector status.phase", func(t *testing.T, k *framework.Kubectl) {
			testFieldSelector(t, k, ns)
		}},
		{"delete vm", func(t *testing.T, k *framework.Kubectl) {
			out := k.MustRun("-n", ns, "delete", "vm", "vm-cirros", "--timeout=60s")
			if want := `virtualmachine.kubevirt.io "vm-cirros" deleted`; !strings.Contains(out, want) {
				t.Errorf("kubectl delete printed %q, want %q", out, want)
			}
			_, err := k.Run("-n", ns, "get", "vm", "vm-cirros")
			if err == nil || !strings.Contains(err.Error(), "NotFound") {
				t.Errorf("get after delete: err = %v, want NotFound", err)
			}
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, k.In(t)) }) {
			t.Fatalf("step %q failed; later steps depend on it", s.name)
		}
	}
}

// testFieldSelector creates two instances, gives them phases through the status subresource
// (no node agent runs them: their launcher pods select no node, so the controller never binds
// them to one), and selects them by status.phase and status.nodeName. Controllers
// may act on them meanwhile: the running one has no node, so the node controller never fails it
// as orphaned, and Succeeded is final. Phases only move forward, so re-reading them after the
// queries tells whether a query could have seen another phase.
func testFieldSelector(t *testing.T, k *framework.Kubectl, ns string) {
	type status struct{ Phase, NodeName string }
	set := map[string]status{
		"vmi-running":   {Phase: "Running"},
		"vmi-succeeded": {Phase: "Succeeded", NodeName: "e2e-no-such-node"},
	}
	for _, name := range []string{"vmi-running", "vmi-succeeded"} {
		k.MustRunInput("apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  name: "+name+
			"\nspec:\n  nodeSelector:\n    e2e.nativevirt.io/no-such-node: \"true\"\n  domain:\n    devices: {}\n    resources:\n      requests:\n        memory: 64M\n", "-n", ns, "apply", "-f", "-")
		st, _ := json.Marshal(map[string]interface{}{"status": map[string]string{"phase": set[name].Phase, "nodeName": set[name].NodeName}})
		k.MustRun("-n", ns, "patch", "vmi", name, "--subresource=status", "--type=merge", "-p", string(st))
	}
	tests := []struct {
		selector string
		want     []string
	}{
		{"status.phase=Running", []string{"vmi-running"}},
		{"status.phase=Succeeded", []string{"vmi-succeeded"}},
		{"status.phase!=Running", []string{"vmi-succeeded"}},
		{"status.phase=Failed", nil},
		{"status.nodeName=e2e-no-such-node", []string{"vmi-succeeded"}},
	}
	k.MustRun("-n", ns, "get", "vmi", "--field-selector", "status.phase=Running")
	got := map[string][]string{}
	for _, tc := range tests {
		out := k.MustRun("-n", ns, "get", "vmi", "--field-selector", tc.selector, "-o", "jsonpath={.items[*].metadata.name}")
		got[tc.selector] = sorted(strings.Fields(out))
	}
	after := map[string]status{}
	out := k.MustRun("-n", ns, "get", "vmi", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.nodeName}{"\n"}{end}`)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := append(strings.Fields(line), "", "", "")
		after[f[0]] = status{Phase: f[1], NodeName: f[2]}
	}
	if diff := cmp.Diff(set, after); diff != "" {
		t.Fatalf("a controller changed the instances while the selectors were queried; the results prove nothing (-set +now):\n%s", diff)
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, got[tc.selector], cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("--field-selector %s (-want +got):\n%s", tc.selector, diff)
		}
	}
}

// getYAML runs kubectl (args must ask for -o yaml) and parses the object.
func getYAML(t *testing.T, k *framework.Kubectl, args ...string) *unstructured.Unstructured {
	t.Helper()
	out := k.MustRun(args...)
	obj := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("parsing kubectl's YAML: %v", err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// field is the value at path in obj (nil when absent).
func field(obj *unstructured.Unstructured, path ...string) interface{} {
	v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, path...)
	return v
}

// names lists the "name" of each element of the list at path in obj.
func names(obj *unstructured.Unstructured, path ...string) []string {
	list, _, _ := unstructured.NestedSlice(obj.Object, path...)
	var out []string
	for _, e := range list {
		if m, ok := e.(map[string]interface{}); ok {
			n, _ := m["name"].(string)
			out = append(out, n)
		}
	}
	return out
}

// openAPIRefresh bounds how long kube-apiserver may serve a stale OpenAPI v3 index after
// nativevirt-apiserver was replaced by a build with a different schema: it re-reads an
// aggregated server's index about once a minute, and until then it proxies the old hash, which
// the new server answers with a redirect that kube-apiserver's proxy refuses.
const openAPIRefresh = 90 * time.Second

// explain runs kubectl explain with args, waiting out a stale OpenAPI index in kube-apiserver
// (another deployment may have replaced the server moments ago; hack/deploy-local.sh waits for
// the index after its own rollouts). Any other failure fails the test at once.
func explain(t *testing.T, k *framework.Kubectl, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(openAPIRefresh)
	for {
		out, err := k.Run(args...)
		if err == nil {
			return out
		}
		if !strings.Contains(err.Error(), "attempted to redirect") || time.Now().After(deadline) {
			t.Fatal(err)
		}
		t.Logf("kube-apiserver's OpenAPI index of kubevirt.io is stale; retrying in 5s")
		time.Sleep(5 * time.Second)
	}
}

// sorted returns list sorted.
func sorted(list []string) []string {
	out := append([]string(nil), list...)
	sort.Strings(out)
	return out
}

// explainHeader is the GROUP and VERSION lines of kubectl explain's output, spaces collapsed.
func explainHeader(out string) string {
	var parts []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "GROUP:") || strings.HasPrefix(line, "VERSION:") {
			parts = append(parts, strings.Join(strings.Fields(line), " "))
		}
	}
	return strings.Join(parts, " ")
}

// explainDescription is the text under DESCRIPTION: in kubectl explain's output.
func explainDescription(out string) string {
	_, after, ok := strings.Cut(out, "DESCRIPTION:")
	if !ok {
		return ""
	}
	return strings.Join(strings.Fields(after), " ")
}
