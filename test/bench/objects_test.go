package bench

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestVMBuilder(t *testing.T) {
	crd := schema.GroupVersion{Group: CRDGroup, Version: "v1"}
	tests := []struct {
		name         string
		gv           schema.GroupVersion
		running      bool
		wantAPI      string
		wantStrategy string
	}{
		{"kubevirt.io, halted", VMResource.GroupVersion(), false, "kubevirt.io/v1", "Halted"},
		{"the CRD's group", crd, false, CRDGroup + "/v1", "Halted"},
		{"running", VMResource.GroupVersion(), true, "kubevirt.io/v1", "Always"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := VMBuilder{GroupVersion: tc.gv}.Build("ns1", "vm-00042", tc.running)
			if err != nil {
				t.Fatal(err)
			}
			if u.GetAPIVersion() != tc.wantAPI || u.GetKind() != "VirtualMachine" || u.GetNamespace() != "ns1" || u.GetName() != "vm-00042" {
				t.Errorf("got %s %s %s/%s", u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName())
			}
			if rs, _, _ := unstructured.NestedString(u.Object, "spec", "runStrategy"); rs != tc.wantStrategy {
				t.Errorf("runStrategy %q, want %q", rs, tc.wantStrategy)
			}
			// "Realistic ~3 KB": within 2.5–4 KB of JSON.
			if n := JSONSize(u); n < 2500 || n > 4096 {
				t.Errorf("JSON size %d bytes, want about 3 KB", n)
			}
			vols, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "volumes")
			found := false
			for _, v := range vols {
				ci, ok := v.(map[string]any)["cloudInitNoCloud"].(map[string]any)
				if ok {
					found = true
					if ud, _ := ci["userData"].(string); !strings.Contains(ud, "fqdn: vm-00042.vms.example.com") {
						t.Errorf("userData not the benchmark's cloud-config: %q", ud)
					}
				}
			}
			if !found {
				t.Error("no cloudInitNoCloud volume")
			}
			if u.GetLabels()["app.kubernetes.io/managed-by"] != "nativevirt-bench" {
				t.Errorf("labels %v lack the benchmark's", u.GetLabels())
			}
		})
	}
}

func TestBuildManyNames(t *testing.T) {
	objs, err := VMBuilder{GroupVersion: VMResource.GroupVersion()}.BuildMany("ns", "watch", 3)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetName())
	}
	if got, want := strings.Join(names, ","), "watch-00000,watch-00001,watch-00002"; got != want {
		t.Errorf("names %s, want %s", got, want)
	}
}
