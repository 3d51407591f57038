package integration

import (
	"maps"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/discovery"

	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// TestActionDiscovery: both groups advertise every action with the verb RBAC checks, through
// the aggregated discovery that kubectl and client-go use.
func TestActionDiscovery(t *testing.T) {
	srv := framework.Start(t, "")
	dc, err := discovery.NewDiscoveryClientForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"virtualmachines/start":                  "update",
		"virtualmachines/stop":                   "update",
		"virtualmachines/restart":                "update",
		"virtualmachines/migrate":                "update",
		"virtualmachineinstances/pause":          "update",
		"virtualmachineinstances/unpause":        "update",
		"virtualmachineinstances/softreboot":     "update",
		"virtualmachineinstances/freeze":         "update",
		"virtualmachineinstances/unfreeze":       "update",
		"virtualmachines/addvolume":              "update",
		"virtualmachines/removevolume":           "update",
		"virtualmachineinstances/addvolume":      "update",
		"virtualmachineinstances/removevolume":   "update",
		"virtualmachineinstances/console":        "get",
		"virtualmachineinstances/vnc":            "get",
		"virtualmachineinstances/guestosinfo":    "get",
		"virtualmachineinstances/userlist":       "get",
		"virtualmachineinstances/filesystemlist": "get",
	}
	// Port forwarding's path goes on after its name (portforward/{port}/{protocol}) and the
	// screenshot's is two segments: KubeVirt serves them in subresources.kubevirt.io only, and so
	// does NativeVirt.
	forwards := map[string]string{
		"virtualmachineinstances/portforward":    "get",
		"virtualmachines/portforward":            "get",
		"virtualmachineinstances/vnc/screenshot": "get",
	}
	for _, gv := range []string{"kubevirt.io/v1", "kubevirt.io/v1alpha3", "subresources.kubevirt.io/v1"} {
		want := maps.Clone(want)
		if gv == "subresources.kubevirt.io/v1" {
			maps.Copy(want, forwards)
		}
		list, err := dc.ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("%s: %v", gv, err)
		}
		got := map[string]string{}
		var topLevel []string
		for _, r := range list.APIResources {
			if _, ok := want[r.Name]; ok || forwards[r.Name] != "" {
				verbs := append([]string(nil), r.Verbs...)
				sort.Strings(verbs)
				got[r.Name] = strings.Join(verbs, ",")
				if !r.Namespaced {
					t.Errorf("%s %s is not namespaced", gv, r.Name)
				}
			}
			// expand-vm-spec is KubeVirt's one top-level resource of the group (a VM sent to it
			// comes back expanded); KubeVirt's discovery lists it too.
			if gv == "subresources.kubevirt.io/v1" && !strings.Contains(r.Name, "/") && r.Name != "expand-vm-spec" {
				topLevel = append(topLevel, r.Name)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s actions (-want +got):\n%s", gv, diff)
		}
		if len(topLevel) > 0 {
			t.Errorf("%s advertises top-level resources %v; kubectl api-resources would list them", gv, topLevel)
		}
	}
}
