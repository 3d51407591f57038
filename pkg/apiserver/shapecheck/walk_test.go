package shapecheck

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

var vmType = reflect.TypeFor[kubevirtv1.VirtualMachine]()

func mustParse(t *testing.T, doc string) any {
	t.Helper()
	v, err := parse([]byte(doc))
	if err != nil {
		t.Fatalf("parse %s: %v", doc, err)
	}
	return v
}

func TestFind(t *testing.T) {
	cases := []struct {
		name, doc string
		// wantField is the path the error names, "" for none; wantDetail a part of its text.
		wantField, wantDetail string
	}{
		{name: "a valid VM", doc: `{"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"runStrategy":"Always",
			"template":{"spec":{"domain":{"resources":{"requests":{"memory":"64Mi"}},"devices":{"disks":[{"name":"d","disk":{"bus":"virtio"}}]}}}}}}`},
		{name: "a bad quantity", doc: `{"spec":{"template":{"spec":{"domain":{"resources":{"requests":{"memory":"notaquantity"}}}}}}}`,
			wantField: "spec.template.spec.domain.resources.requests.memory", wantDetail: "quantities must match"},
		{name: "a string for a bool", doc: `{"spec":{"running":"yes"}}`, wantField: "spec.running", wantDetail: "must be a boolean, not a string"},
		{name: "an object for a list", doc: `{"spec":{"template":{"spec":{"volumes":{"a":1}}}}}`,
			wantField: "spec.template.spec.volumes", wantDetail: "must be an array, not an object"},
		{name: "a number too big for int32", doc: `{"spec":{"template":{"spec":{"domain":{"cpu":{"cores":99999999999}}}}}}`,
			wantField: "spec.template.spec.domain.cpu.cores", wantDetail: "integer of 32 bits"},
		{name: "a fraction for an integer", doc: `{"spec":{"template":{"spec":{"domain":{"cpu":{"cores":1.5}}}}}}`,
			wantField: "spec.template.spec.domain.cpu.cores"},
		{name: "a bad timestamp", doc: `{"metadata":{"creationTimestamp":"yesterday"}}`, wantField: "metadata.creationTimestamp"},
		{name: "unknown fields are strict decoding's concern", doc: `{"spec":{"notAField":{"x":[1,2]}}}`},
		{name: "null is the zero value", doc: `{"spec":{"template":null,"running":null}}`},
		{name: "too deep under an unknown field", doc: `{"spec":{"x":` + strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2) + `}}`,
			wantDetail: "nested more than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkErr(t, Find(mustParse(t, c.doc), vmType, nil), c.wantField, c.wantDetail)
		})
	}
}

func TestFindInPatch(t *testing.T) {
	vols := func(list string) string { return `{"spec":{"template":{"spec":{"volumes":` + list + `}}}}` }
	cases := []struct {
		name, doc             string
		wantField, wantDetail string
	}{
		{name: "a valid merge", doc: vols(`[{"name":"a","emptyDisk":{"capacity":"1Gi"}},{"name":"b","$patch":"delete"}]`)},
		{name: "directives", doc: `{"spec":{"template":{"spec":{"$setElementOrder/volumes":[{"name":"a"}],"volumes":[{"$patch":"replace"}]}}},
			"metadata":{"$deleteFromPrimitiveList/finalizers":["x"],"finalizers":["y"]}}`},
		{name: "a number in a merge list", doc: vols(`[-1]`), wantField: "spec.template.spec.volumes[0]", wantDetail: `merged by its key "name"`},
		{name: "an object as the merge key", doc: vols(`[{"name":{"a":1}}]`), wantField: "spec.template.spec.volumes[0].name",
			wantDetail: "merge key"},
		{name: "no merge key", doc: vols(`[{"emptyDisk":{}}]`), wantField: "spec.template.spec.volumes[0].name"},
		{name: "a bad $patch", doc: vols(`[{"name":"a","$patch":"explode"}]`), wantField: "spec.template.spec.volumes[0].$patch"},
		{name: "an unknown directive", doc: `{"spec":{"$frobnicate":1}}`, wantField: "spec.$frobnicate"},
		{name: "a bad element order", doc: `{"spec":{"template":{"spec":{"$setElementOrder/volumes":[5]}}}}`,
			wantField: "spec.template.spec.$setElementOrder/volumes[0]"},
		{name: "a bad value inside a merged element", doc: vols(`[{"name":"a","emptyDisk":{"capacity":"lots"}}]`),
			wantField: "spec.template.spec.volumes[0].emptyDisk.capacity"},
		{name: "deep nesting", doc: `{"spec":{"x":` + strings.Repeat(`{"a":`, MaxDepth+2) + `1` + strings.Repeat("}", MaxDepth+2) + `}}`,
			wantDetail: "nested more than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkErr(t, FindInPatch(mustParse(t, c.doc), vmType, nil), c.wantField, c.wantDetail)
		})
	}
}

func checkErr(t *testing.T, err *field.Error, wantField, wantDetail string) {
	t.Helper()
	if wantField == "" && wantDetail == "" {
		if err != nil {
			t.Fatalf("got %v, want no error", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("got no error, want one naming %q", wantField)
	}
	if wantField != "" && err.Field != wantField {
		t.Errorf("error names %q, want %q (%v)", err.Field, wantField, err)
	}
	if !strings.Contains(err.Error(), wantDetail) {
		t.Errorf("error %q does not say %q", err.Error(), wantDetail)
	}
}

// TestFindInApplyDuplicateKeys: an apply configuration naming a merge key twice is refused
// (structured-merge-diff would answer a 500); a strategic merge patch may (validation decides).
func TestFindInApplyDuplicateKeys(t *testing.T) {
	doc := `{"spec":{"template":{"spec":{"volumes":[{"name":"a","emptyDisk":{"capacity":"1Gi"}},{"name":"b"},{"name":"a"}]}}}}`
	checkErr(t, FindInApply(mustParse(t, doc), vmType, nil), "spec.template.spec.volumes[2].name", "Duplicate value")
	checkErr(t, FindInPatch(mustParse(t, doc), vmType, nil), "", "")
	checkErr(t, FindInApply(mustParse(t, `{"spec":{"template":{"spec":{"volumes":[{"name":"1"},{"name":1}]}}}}`), vmType, nil),
		"spec.template.spec.volumes[1].name", "")
}
