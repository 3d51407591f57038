package bench

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The structural schema of the CRD target (c) is generated from what nativevirt-apiserver serves
// at /openapi/v3/apis/kubevirt.io/v1, so that both store exactly the same kinds with the same
// validation. A CRD schema is "structural" (apiextensions.k8s.io/v1): no $ref, a type on every
// node, no defaults that are not pruned, list map keys that are required, and only `type:
// object` for the root's metadata. The conversion below follows those rules.

const (
	refPrefix     = "#/components/schemas/"
	objectMetaRef = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	quantityRef   = "io.k8s.apimachinery.pkg.api.resource.Quantity"
	// quantityPattern is the shape of a resource.Quantity string (number, optional suffix).
	quantityPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
)

// copiedKeys are the OpenAPI keywords carried into the structural schema unchanged. Dropped:
// default (a CRD default must itself validate, and `default: {}` on a struct with required
// fields does not), the patch-strategy and group-version-kind extensions (not CRD fields).
var copiedKeys = []string{
	"description", "type", "format", "enum", "required", "pattern",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
	"minItems", "maxItems", "uniqueItems", "multipleOf", "minProperties", "maxProperties",
	"x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
}

// StructuralSchema converts the OpenAPI v3 document of a group version (the JSON served at
// /openapi/v3/apis/<group>/<version>) into the structural schema of the kind gvk, for a
// CustomResourceDefinition. keepDescriptions false drops every description (smaller CRD).
func StructuralSchema(doc []byte, gvk schema.GroupVersionKind, keepDescriptions bool) (*apiextensionsv1.JSONSchemaProps, error) {
	var d struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("parse OpenAPI v3 document: %w", err)
	}
	root := findKind(d.Components.Schemas, gvk)
	if root == "" {
		return nil, fmt.Errorf("no schema with x-kubernetes-group-version-kind %s in the document", gvk)
	}
	c := &converter{schemas: d.Components.Schemas, descriptions: keepDescriptions, visiting: map[string]bool{}}
	out, err := c.ref(root, true)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	props := &apiextensionsv1.JSONSchemaProps{}
	if err := json.Unmarshal(b, props); err != nil {
		return nil, fmt.Errorf("structural schema does not decode as JSONSchemaProps: %w", err)
	}
	return props, nil
}

// findKind returns the name of the schema that declares gvk.
func findKind(schemas map[string]map[string]any, gvk schema.GroupVersionKind) string {
	for _, name := range slices.Sorted(maps.Keys(schemas)) {
		list, _ := schemas[name]["x-kubernetes-group-version-kind"].([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			if m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind {
				return name
			}
		}
	}
	return ""
}

type converter struct {
	schemas      map[string]map[string]any
	descriptions bool
	// visiting holds the named schemas on the current path: a CRD schema cannot recurse.
	visiting map[string]bool
}

// ref converts the named schema; root is true only for the kind itself.
func (c *converter) ref(name string, root bool) (map[string]any, error) {
	switch {
	case name == objectMetaRef:
		// The API server owns metadata; a CRD may only say `type: object` for the root's, and
		// embedded metadata (the VMI template's) is kept whole.
		if root {
			return nil, fmt.Errorf("the kind itself cannot be ObjectMeta")
		}
		return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}, nil
	case c.visiting[name]:
		return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}, nil
	}
	s, ok := c.schemas[name]
	if !ok {
		return nil, fmt.Errorf("unresolved $ref %q", name)
	}
	c.visiting[name] = true
	defer delete(c.visiting, name)
	out, err := c.node(s, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if root {
		if props, ok := out["properties"].(map[string]any); ok {
			if _, ok := props["metadata"]; ok {
				props["metadata"] = map[string]any{"type": "object"}
			}
		}
	}
	return out, nil
}

// node converts one schema object; name is the schema's component name when it has one.
func (c *converter) node(s map[string]any, name string) (map[string]any, error) {
	out := map[string]any{}
	// A $ref, or kube-openapi's `allOf: [{$ref}]` beside a description, contributes the referenced
	// schema; the siblings (description) override it.
	var refs []string
	if r, ok := s["$ref"].(string); ok {
		refs = append(refs, r)
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, e := range all {
			m, _ := e.(map[string]any)
			r, ok := m["$ref"].(string)
			if !ok || len(m) != 1 {
				return nil, fmt.Errorf("allOf other than [{$ref}] is not supported")
			}
			refs = append(refs, r)
		}
	}
	for _, r := range refs {
		if !strings.HasPrefix(r, refPrefix) {
			return nil, fmt.Errorf("$ref %q is not a component schema", r)
		}
		m, err := c.ref(strings.TrimPrefix(r, refPrefix), false)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, m)
	}
	for _, k := range copiedKeys {
		if v, ok := s[k]; ok && (k != "description" || c.descriptions) {
			out[k] = v
		}
	}
	if !c.descriptions {
		delete(out, "description")
	}
	if oneOf, ok := firstOf(s, "oneOf", "anyOf"); ok {
		if err := intOrString(out, oneOf, name); err != nil {
			return nil, err
		}
	}
	if p, ok := s["properties"].(map[string]any); ok {
		props := make(map[string]any, len(p))
		for k, v := range p {
			m, _ := v.(map[string]any)
			cv, err := c.node(m, "")
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			props[k] = cv
		}
		out["properties"] = props
	}
	if it, ok := s["items"].(map[string]any); ok {
		cv, err := c.node(it, "")
		if err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
		out["items"] = cv
	}
	switch ap := s["additionalProperties"].(type) {
	case map[string]any:
		cv, err := c.node(ap, "")
		if err != nil {
			return nil, fmt.Errorf("additionalProperties: %w", err)
		}
		out["additionalProperties"] = cv
	case bool:
		out["additionalProperties"] = ap
	}
	if out["type"] == nil && out["x-kubernetes-int-or-string"] == nil && out["x-kubernetes-preserve-unknown-fields"] == nil {
		// Free-form: anything goes, and nothing is pruned.
		out["x-kubernetes-preserve-unknown-fields"] = true
	}
	requireMapKeys(out)
	return out, nil
}

// firstOf returns the first present list among keys.
func firstOf(s map[string]any, keys ...string) ([]any, bool) {
	for _, k := range keys {
		if v, ok := s[k].([]any); ok {
			return v, true
		}
	}
	return nil, false
}

// intOrString turns a oneOf of scalar types (resource.Quantity: string|number, IntOrString:
// integer|string) into the CRD form, x-kubernetes-int-or-string.
func intOrString(out map[string]any, oneOf []any, name string) error {
	types := map[string]bool{}
	for _, e := range oneOf {
		m, _ := e.(map[string]any)
		t, _ := m["type"].(string)
		if len(m) != 1 || t == "" {
			return fmt.Errorf("oneOf/anyOf other than a choice of scalar types is not supported")
		}
		types[t] = true
	}
	if !types["string"] || !(types["integer"] || types["number"]) || len(types) != 2 {
		return fmt.Errorf("oneOf/anyOf of %v is not an int-or-string", slices.Sorted(maps.Keys(types)))
	}
	delete(out, "type")
	delete(out, "format")
	out["anyOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
	out["x-kubernetes-int-or-string"] = true
	if name == quantityRef {
		out["pattern"] = quantityPattern
	}
	return nil
}

// requireMapKeys makes the keys of a map-type list required properties of its items: a CRD
// demands that each key is required or defaulted, and defaults are dropped here.
func requireMapKeys(s map[string]any) {
	if s["x-kubernetes-list-type"] != "map" {
		return
	}
	items, _ := s["items"].(map[string]any)
	keys, _ := s["x-kubernetes-list-map-keys"].([]any)
	if items == nil {
		return
	}
	req, _ := items["required"].([]any)
	req = slices.Clone(req) // the source document's slice may be shared
	for _, k := range keys {
		if !slices.Contains(req, k) {
			req = append(req, k)
		}
	}
	items["required"] = req
}
