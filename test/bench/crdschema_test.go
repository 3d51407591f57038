package bench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// testDoc is a small OpenAPI v3 document in the shape kube-openapi serves.
const testDoc = `{"components":{"schemas":{
 "x.Thing": {
  "description": "Thing is a kind.",
  "type": "object",
  "required": ["spec"],
  "x-kubernetes-group-version-kind": [{"group": "example.io", "version": "v1", "kind": "Thing"}],
  "properties": {
   "apiVersion": {"type": "string"},
   "metadata": {"default": {}, "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]},
   "spec": {"description": "The spec.", "default": {}, "allOf": [{"$ref": "#/components/schemas/x.Spec"}]}
  }
 },
 "x.Spec": {
  "description": "Spec of a thing.",
  "type": "object",
  "properties": {
   "disks": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
     "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name",
     "items": {"default": {}, "allOf": [{"$ref": "#/components/schemas/x.Disk"}]}},
   "memory": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"},
   "port": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}]},
   "labels": {"type": "object", "additionalProperties": {"type": "string", "default": ""}},
   "template": {"allOf": [{"$ref": "#/components/schemas/x.Template"}]},
   "next": {"allOf": [{"$ref": "#/components/schemas/x.Spec"}]},
   "free": {"description": "anything"},
   "policy": {"type": "string", "enum": ["Always", "Never"], "default": "Always"},
   "cores": {"type": "integer", "format": "int32"}
  }
 },
 "x.Disk": {"type": "object", "properties": {"name": {"type": "string", "default": ""}, "bus": {"type": "string"}}},
 "x.Template": {"type": "object", "properties": {
   "metadata": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]}}},
 "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "object", "properties": {"name": {"type": "string"}}},
 "io.k8s.apimachinery.pkg.api.resource.Quantity": {"description": "Quantity.", "oneOf": [{"type": "string"}, {"type": "number"}]},
 "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]}
}}}`

func TestStructuralSchema(t *testing.T) {
	thing := schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Thing"}
	preserve := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	intOrStr := []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
	spec := func(desc bool) map[string]any {
		d := func(m map[string]any, s string) map[string]any {
			if desc {
				m["description"] = s
			}
			return m
		}
		return d(map[string]any{
			"type": "object",
			"properties": map[string]any{
				"disks": map[string]any{
					"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
					"items": map[string]any{
						"type": "object", "required": []any{"name"},
						"properties": map[string]any{"name": map[string]any{"type": "string"}, "bus": map[string]any{"type": "string"}},
					},
				},
				"memory": d(map[string]any{"anyOf": intOrStr, "x-kubernetes-int-or-string": true, "pattern": quantityPattern}, "Quantity."),
				"port":   map[string]any{"anyOf": intOrStr, "x-kubernetes-int-or-string": true},
				"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
				"template": map[string]any{"type": "object", "properties": map[string]any{
					"metadata": preserve,
				}},
				"next":   preserve,
				"free":   d(map[string]any{"x-kubernetes-preserve-unknown-fields": true}, "anything"),
				"policy": map[string]any{"type": "string", "enum": []any{"Always", "Never"}},
				"cores":  map[string]any{"type": "integer", "format": "int32"},
			},
		}, "The spec.")
	}
	tests := []struct {
		name         string
		gvk          schema.GroupVersionKind
		descriptions bool
		want         map[string]any
		wantErr      string
	}{
		{
			name: "with descriptions", gvk: thing, descriptions: true,
			want: map[string]any{
				"description": "Thing is a kind.", "type": "object", "required": []any{"spec"},
				"properties": map[string]any{
					"apiVersion": map[string]any{"type": "string"},
					"metadata":   map[string]any{"type": "object"},
					"spec":       spec(true),
				},
			},
		},
		{
			name: "without descriptions", gvk: thing,
			want: map[string]any{
				"type": "object", "required": []any{"spec"},
				"properties": map[string]any{
					"apiVersion": map[string]any{"type": "string"},
					"metadata":   map[string]any{"type": "object"},
					"spec":       spec(false),
				},
			},
		},
		{name: "unknown kind", gvk: schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Other"}, wantErr: "no schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := StructuralSchema([]byte(testDoc), tc.gvk, tc.descriptions)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var gotMap map[string]any
			if err := json.Unmarshal(b, &gotMap); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, gotMap); diff != "" {
				t.Errorf("StructuralSchema (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStructuralSchemaRejects(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "g", Version: "v1", Kind: "K"}
	wrap := func(props string) string {
		return `{"components":{"schemas":{"K":{"type":"object","x-kubernetes-group-version-kind":[{"group":"g","version":"v1","kind":"K"}],"properties":{` + props + `}}}}}`
	}
	tests := []struct {
		name, doc, wantErr string
	}{
		{"dangling ref", wrap(`"a":{"$ref":"#/components/schemas/Missing"}`), "unresolved $ref"},
		{"foreign ref", wrap(`"a":{"$ref":"other.json#/X"}`), "not a component schema"},
		{"oneOf of objects", wrap(`"a":{"oneOf":[{"type":"object"},{"type":"string"}]}`), "not an int-or-string"},
		{"allOf with inline schema", wrap(`"a":{"allOf":[{"type":"string"}]}`), "allOf other than"},
		{"not JSON", `{`, "parse OpenAPI"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := StructuralSchema([]byte(tc.doc), gvk, true)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
