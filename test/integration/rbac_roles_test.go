package integration

import (
	"bytes"
	"os"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// rolesFile holds the ClusterRoles that aggregate into view, edit and admin.
const rolesFile = "../../artifacts/deploy/base/rbac-user-roles.yaml"

// loadClusterRoles reads the ClusterRoles of rolesFile by name.
func loadClusterRoles(t *testing.T) map[string]rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile(rolesFile)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]rbacv1.ClusterRole{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var r rbacv1.ClusterRole
		if err := dec.Decode(&r); err != nil {
			break
		}
		if r.Kind == "ClusterRole" {
			out[r.Name] = r
		}
	}
	return out
}

// allows reports whether one of rules grants verb on group/resource (RBAC's matching, with
// wildcards).
func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	has := func(list []string, v string) bool {
		for _, x := range list {
			if x == v || x == rbacv1.ResourceAll {
				return true
			}
		}
		return false
	}
	for _, r := range rules {
		if has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// TestHotplugRBAC: the roles aggregated into edit and admin may hotplug volumes into VMs and
// VMIs, in both groups; view may not.
func TestHotplugRBAC(t *testing.T) {
	roles := loadClusterRoles(t)
	want := map[string]bool{"kubevirt.io:view": false, "kubevirt.io:edit": true, "kubevirt.io:admin": true}
	for role, allowed := range want {
		r, ok := roles[role]
		if !ok {
			t.Fatalf("%s has no ClusterRole %s", rolesFile, role)
		}
		for _, group := range []string{"kubevirt.io", "subresources.kubevirt.io"} {
			for _, res := range []string{"virtualmachines/addvolume", "virtualmachines/removevolume",
				"virtualmachineinstances/addvolume", "virtualmachineinstances/removevolume"} {
				if got := allows(r.Rules, group, res, "update"); got != allowed {
					t.Errorf("%s: update %s in %s allowed = %v, want %v", role, res, group, got, allowed)
				}
			}
		}
	}
}

// TestCDIRBAC: the roles aggregated into view, edit and admin as CDI's: view reads DataVolumes
// and DataSources; edit and admin also write them, may clone from their namespace (create
// datavolumes/source, CDI's clone authorization) and ask for upload tokens; nobody but the
// controller writes their status.
func TestCDIRBAC(t *testing.T) {
	roles := loadClusterRoles(t)
	type right struct{ group, resource, verb string }
	rights := []right{
		{"cdi.kubevirt.io", "datavolumes", "get"}, {"cdi.kubevirt.io", "datasources", "list"},
		{"cdi.kubevirt.io", "datavolumes", "create"}, {"cdi.kubevirt.io", "datavolumes", "delete"},
		{"cdi.kubevirt.io", "datasources", "create"}, {"cdi.kubevirt.io", "datavolumes/source", "create"},
		{"upload.cdi.kubevirt.io", "uploadtokenrequests", "create"}, {"cdi.kubevirt.io", "datavolumes/status", "update"},
	}
	want := map[string]map[right]bool{
		"cdi.kubevirt.io:view":  {rights[0]: true, rights[1]: true},
		"cdi.kubevirt.io:edit":  {rights[0]: true, rights[1]: true, rights[2]: true, rights[3]: true, rights[4]: true, rights[5]: true, rights[6]: true},
		"cdi.kubevirt.io:admin": {rights[0]: true, rights[1]: true, rights[2]: true, rights[3]: true, rights[4]: true, rights[5]: true, rights[6]: true},
	}
	aggregate := map[string]string{"cdi.kubevirt.io:view": "view", "cdi.kubevirt.io:edit": "edit", "cdi.kubevirt.io:admin": "admin"}
	for role, allowed := range want {
		r, ok := roles[role]
		if !ok {
			t.Fatalf("%s has no ClusterRole %s", rolesFile, role)
		}
		if r.Labels["rbac.authorization.k8s.io/aggregate-to-"+aggregate[role]] != "true" {
			t.Errorf("%s does not aggregate into %s", role, aggregate[role])
		}
		for _, x := range rights {
			if got := allows(r.Rules, x.group, x.resource, x.verb); got != allowed[x] {
				t.Errorf("%s: %s %s in %s allowed = %v, want %v", role, x.verb, x.resource, x.group, got, allowed[x])
			}
		}
	}
}
