package storage

import (
	"encoding/json"
	"fmt"
	"testing"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// VMs whose maps are written alike share them, and sharing never changes how a VM serializes:
// quantities equal in value but serialized differently ("1Gi", "1073741824") keep their own maps.
func TestShareSpecMapsKeepsSerialization(t *testing.T) {
	var vms []*kubevirtv1.VirtualMachine
	var before [][]byte
	for i, memory := range []string{"1Gi", "1Gi", "1073741824", "1024Mi"} {
		var vm kubevirtv1.VirtualMachine
		// Decoded from JSON as the cache's objects are: a Quantity keeps the form it was read in.
		b, _ := json.Marshal(shapedVM(fmt.Sprintf("vm-%d", i), "1Gi"))
		b = []byte(replaceOnce(string(b), `"memory":"1Gi"`, `"memory":"`+memory+`"`))
		if err := json.Unmarshal(b, &vm); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(&vm)
		vms, before = append(vms, &vm), append(before, out)
	}
	for _, vm := range vms {
		shareSpecMaps(vm)
	}
	for i, vm := range vms {
		out, _ := json.Marshal(vm)
		if string(out) != string(before[i]) {
			t.Errorf("VM %d serializes differently after sharing:\n%s\nwas\n%s", i, out, before[i])
		}
	}
	requests := func(i int) any { return vms[i].Spec.Template.Spec.Domain.Resources.Requests }
	if !sameMap(requests(0), requests(1)) {
		t.Error("equal requests are separate maps")
	}
	r0, _ := json.Marshal(requests(0))
	r2, _ := json.Marshal(requests(2))
	if string(r0) == string(r2) {
		t.Fatalf("1Gi and 1073741824 serialize alike (%s): the test needs two forms", r0)
	}
	if sameMap(requests(0), requests(2)) {
		t.Error("requests written differently share one map")
	}
	limits := func(i int) any { return vms[i].Spec.Template.Spec.Domain.Resources.Limits }
	if !sameMap(limits(0), limits(3)) || !sameMap(vms[0].Spec.Template.Spec.NodeSelector, vms[3].Spec.Template.Spec.NodeSelector) {
		t.Error("equal limits or node selectors are separate maps")
	}
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}

// Entries that differ only in where a separator would fall get different keys.
func TestMapKeyIsUnambiguous(t *testing.T) {
	id := func(v string) string { return v }
	a := mapKey("k", map[string]string{"a": "b:c"}, id)
	b := mapKey("k", map[string]string{"a:b": "c"}, id)
	c := mapKey("k", map[string]string{"a": "b", "c": ""}, id)
	if a == b || a == c || b == c {
		t.Errorf("keys collide: %q %q %q", a, b, c)
	}
}

// The table of canonical maps never holds more than maxSharedMaps.
func TestSharedMapsAreBounded(t *testing.T) {
	for i := range 3 * maxSharedMaps {
		shareStringMap("NodeSelector", map[string]string{"n": fmt.Sprint(i)})
	}
	sharedMaps.Lock()
	n := len(sharedMaps.m)
	sharedMaps.Unlock()
	if n > maxSharedMaps {
		t.Errorf("%d canonical maps kept, the bound is %d", n, maxSharedMaps)
	}
}
