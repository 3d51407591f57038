// Package shapecheck finds the place in a JSON document that does not fit the Go type it is
// meant for, and names it as a field path.
//
// Decoding errors from Go's JSON decoders say what was wrong but often not where: a custom
// UnmarshalJSON (resource.Quantity, metav1.Time, intstr.IntOrString) reports "quantities must
// match the regular expression …" with no field, and k8s.io/apimachinery's strategic merge patch
// answers a merge list holding a non-object with a 500, or panics on a merge key holding an
// object. Walking the document beside the Go type finds the first such place, so the API server
// can answer a 400 that names it (spec.template.spec.domain.resources.requests.memory) before, or
// instead of, the generic machinery's error.
package shapecheck

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxDepth is how deeply a document may nest objects and arrays. No object of the served APIs
// nests half as deep; a deeper document is hostile, and refusing it keeps the recursive walks
// of the decoders and of the strategic merge patch bounded.
const MaxDepth = 64

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// Find returns the first place in doc (a value decoded by encoding/json with UseNumber) that
// cannot be decoded into a value of type t, or nil when every value fits. Fields t does not have
// are not its concern (strict decoding reports them). Paths start at path (nil: the root).
func Find(doc any, t reflect.Type, path *field.Path) *field.Error {
	return walker{}.value(doc, t, path, 0)
}

// FindInPatch is Find for a strategic merge patch of a t: it allows the patch's directives
// ($patch, $retainKeys, $setElementOrder/…, $deleteFromPrimitiveList/…) and requires each
// element of a list merged by a key to be an object naming its key with a scalar.
func FindInPatch(doc any, t reflect.Type, path *field.Path) *field.Error {
	return walker{mode: strategicMerge}.value(doc, t, path, 0)
}

// FindInApply is Find for a server-side apply configuration of a t: every field must be one of
// t's (structured-merge-diff refuses the others), and each element of a list keyed by a field
// must be an object naming its key with a scalar.
func FindInApply(doc any, t reflect.Type, path *field.Path) *field.Error {
	return walker{mode: apply}.value(doc, t, path, 0)
}

// mode is the kind of document walked.
type mode int

const (
	object         mode = iota // an object to decode: unknown fields are not the walk's concern
	strategicMerge             // a strategic merge patch: directives, lists merged by key
	apply                      // an apply configuration: known fields only, lists keyed by a field
)

type walker struct {
	mode mode
}

func (w walker) value(v any, t reflect.Type, p *field.Path, depth int) *field.Error {
	if depth > MaxDepth {
		return field.Invalid(p, "…", fmt.Sprintf("nested more than %d levels deep", MaxDepth))
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil // null decodes to the zero value; in a patch it deletes
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return unmarshalAs(v, t, p)
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		if _, ok := v.(string); !ok {
			return mismatch(p, v, "string")
		}
		return unmarshalAs(v, t, p)
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return mismatch(p, v, "object")
		}
		return w.object(obj, t, p, depth)
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return mismatch(p, v, "object")
		}
		for _, k := range sortedKeys(obj) {
			if err := w.value(obj[k], t.Elem(), mapKey(p, k), depth+1); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			if _, ok := v.(string); !ok {
				return mismatch(p, v, "string (base64)")
			}
			return unmarshalAs(v, t, p)
		}
		list, ok := v.([]any)
		if !ok {
			return mismatch(p, v, "array")
		}
		for i, e := range list {
			if err := w.value(e, t.Elem(), p.Index(i), depth+1); err != nil {
				return err
			}
		}
		return nil
	case reflect.Interface:
		return depthOf(v, p, depth)
	default:
		return scalar(v, t, p)
	}
}

// object walks the fields of a struct that doc names; in a patch it checks the directives and
// the lists merged by key.
func (w walker) object(obj map[string]any, t reflect.Type, p *field.Path, depth int) *field.Error {
	fields := fieldsOf(t)
	for _, k := range sortedKeys(obj) {
		v := obj[k]
		if w.mode == strategicMerge && len(k) > 0 && k[0] == '$' {
			if err := directive(k, v, fields, p); err != nil {
				return err
			}
			continue
		}
		f, ok := fields[k]
		if !ok && w.mode == apply {
			return field.Invalid(p.Child(k), short(v), "field not declared in the schema")
		}
		if !ok {
			if err := depthOf(v, p.Child(k), depth+1); err != nil {
				return err
			}
			continue
		}
		if w.mode != object && f.mergeKey != "" {
			if err := w.mergeList(v, f, p.Child(k), depth+1); err != nil {
				return err
			}
			continue
		}
		if err := w.value(v, f.typ, p.Child(k), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// mergeList checks a patch's list that is merged by f.mergeKey: objects, each naming its key
// with a scalar unless it is a $patch directive.
func (w walker) mergeList(v any, f fieldInfo, p *field.Path, depth int) *field.Error {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return mismatch(p, v, "array")
	}
	elem := f.typ
	for elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	elem = elem.Elem()
	// An apply configuration names each key once: structured-merge-diff answers a duplicate with
	// an error the handler reports as a 500.
	seen := map[string]bool{}
	for i, e := range list {
		ep := p.Index(i)
		obj, ok := e.(map[string]any)
		if !ok {
			return field.Invalid(ep, short(e), fmt.Sprintf("must be an object: the list is merged by its key %q", f.mergeKey))
		}
		key, hasKey := obj[f.mergeKey]
		// {"$patch": "replace"} alone replaces the whole list; every other element names its key.
		if replace := obj["$patch"] == "replace" && w.mode == strategicMerge; !hasKey && !replace {
			return field.Required(ep.Child(f.mergeKey), "the list is merged by this key")
		}
		if hasKey && !isScalar(key) {
			return field.Invalid(ep.Child(f.mergeKey), short(key), "must be a string, number or boolean: it is the list's merge key")
		}
		if hasKey && w.mode == apply {
			k := fmt.Sprintf("%T:%v", key, key)
			if seen[k] {
				return field.Duplicate(ep.Child(f.mergeKey), key)
			}
			seen[k] = true
		}
		if err := w.value(obj, elem, ep, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// directive checks one of a strategic merge patch's directives in an object of fields.
func directive(k string, v any, fields map[string]fieldInfo, p *field.Path) *field.Error {
	switch {
	case k == "$patch":
		s, ok := v.(string)
		if !ok || (s != "replace" && s != "merge" && s != "delete") {
			return field.NotSupported(p.Child(k), v, []string{"replace", "merge", "delete"})
		}
		return nil
	case k == "$retainKeys":
		return stringList(v, p.Child(k))
	case len(k) > len("$setElementOrder/") && k[:len("$setElementOrder/")] == "$setElementOrder/":
		name := k[len("$setElementOrder/"):]
		list, ok := v.([]any)
		if !ok {
			return mismatch(p.Child(k), v, "array")
		}
		f := fields[name]
		for i, e := range list {
			if f.mergeKey == "" {
				if !isScalar(e) {
					return field.Invalid(p.Child(k).Index(i), short(e), "must be a string, number or boolean")
				}
				continue
			}
			obj, ok := e.(map[string]any)
			if !ok || !isScalar(obj[f.mergeKey]) {
				return field.Invalid(p.Child(k).Index(i), short(e), fmt.Sprintf("must be an object naming its %q", f.mergeKey))
			}
		}
		return nil
	case len(k) > len("$deleteFromPrimitiveList/") && k[:len("$deleteFromPrimitiveList/")] == "$deleteFromPrimitiveList/":
		list, ok := v.([]any)
		if !ok {
			return mismatch(p.Child(k), v, "array")
		}
		for i, e := range list {
			if !isScalar(e) {
				return field.Invalid(p.Child(k).Index(i), short(e), "must be a string, number or boolean")
			}
		}
		return nil
	default:
		return field.NotSupported(p.Child(k), nil,
			[]string{"$patch", "$retainKeys", "$setElementOrder/<list>", "$deleteFromPrimitiveList/<list>"})
	}
}

func stringList(v any, p *field.Path) *field.Error {
	list, ok := v.([]any)
	if !ok {
		return mismatch(p, v, "array of strings")
	}
	for i, e := range list {
		if _, ok := e.(string); !ok {
			return mismatch(p.Index(i), e, "string")
		}
	}
	return nil
}

// scalar checks a JSON scalar against a Go string, bool or number kind.
func scalar(v any, t reflect.Type, p *field.Path) *field.Error {
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); !ok {
			return mismatch(p, v, "string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return mismatch(p, v, "boolean")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return mismatch(p, v, "integer")
		}
		if _, err := strconv.ParseInt(n.String(), 10, t.Bits()); err != nil {
			return field.Invalid(p, n.String(), fmt.Sprintf("must be an integer of %d bits", t.Bits()))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			return mismatch(p, v, "integer")
		}
		if _, err := strconv.ParseUint(n.String(), 10, t.Bits()); err != nil {
			return field.Invalid(p, n.String(), fmt.Sprintf("must be a non-negative integer of %d bits", t.Bits()))
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return mismatch(p, v, "number")
		}
		if _, err := strconv.ParseFloat(n.String(), t.Bits()); err != nil {
			return field.Invalid(p, n.String(), "must be a number")
		}
	}
	return nil
}

// unmarshalAs decodes v into a new t with t's own decoder and names p when it fails.
func unmarshalAs(v any, t reflect.Type, p *field.Path) *field.Error {
	raw, err := json.Marshal(v)
	if err != nil {
		return field.Invalid(p, short(v), err.Error())
	}
	if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
		return field.Invalid(p, short(v), err.Error())
	}
	return nil
}

// depthOf bounds the nesting of a value no Go type constrains (an unknown field, an interface).
func depthOf(v any, p *field.Path, depth int) *field.Error {
	if depth > MaxDepth {
		return field.Invalid(p, "…", fmt.Sprintf("nested more than %d levels deep", MaxDepth))
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if err := depthOf(x[k], p.Key(k), depth+1); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := depthOf(e, p.Index(i), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// mapKey names a map's entry: as a field when its key is a plain word (requests.memory, as a
// user writes it), in brackets otherwise (labels[app.kubernetes.io/name]).
func mapKey(p *field.Path, k string) *field.Path {
	if k == "" {
		return p.Key(k)
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return p.Key(k)
		}
	}
	return p.Child(k)
}

// describe is fe as a person reads it: the document itself is "the document", not "<nil>".
func describe(fe *field.Error) string {
	if fe.Field == "" || fe.Field == "<nil>" {
		return "the document: " + fe.ErrorBody()
	}
	return fe.Error()
}

func mismatch(p *field.Path, v any, want string) *field.Error {
	return field.Invalid(p, short(v), fmt.Sprintf("must be %s %s, not %s", article(want), want, kindOf(v)))
}

func article(s string) string {
	switch s[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an"
	}
	return "a"
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, bool, json.Number:
		return true
	}
	return false
}

// short is the value shown in an error: scalars as they are, containers by their kind, long
// strings cut (the error is for a person; a 1 MiB value does not help them).
func short(v any) any {
	switch x := v.(type) {
	case map[string]any, []any:
		return kindOf(x)
	case string:
		if len(x) > 64 {
			return x[:64] + "…"
		}
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
