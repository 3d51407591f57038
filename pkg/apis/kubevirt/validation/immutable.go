package validation

import (
	"encoding/json"
	"fmt"
	"sort"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateImmutableSpec refuses any difference between newSpec and oldSpec. The error sits at
// fldPath and names the first differing field, so that the user sees what they changed.
func validateImmutableSpec(newSpec, oldSpec any, fldPath *field.Path) field.ErrorList {
	if apiequality.Semantic.DeepEqual(newSpec, oldSpec) {
		return nil
	}
	detail := "spec is immutable after creation"
	if diff := firstDifference(newSpec, oldSpec, fldPath); diff != nil {
		detail = fmt.Sprintf("%s (first change at %s)", detail, diff)
	}
	return field.ErrorList{field.Forbidden(fldPath, detail)}
}

// firstDifference returns the path of the first field whose JSON differs between a and b, or
// nil when the JSON forms are equal (a semantic difference JSON does not show).
func firstDifference(a, b any, fldPath *field.Path) *field.Path {
	var ja, jb any
	if !toJSONValue(a, &ja) || !toJSONValue(b, &jb) {
		return nil
	}
	return diffJSON(ja, jb, fldPath)
}

// toJSONValue converts v to its generic JSON form.
func toJSONValue(v any, out *any) bool {
	raw, err := json.Marshal(v)
	if err != nil {
		return false
	}
	return json.Unmarshal(raw, out) == nil
}

// diffJSON walks two generic JSON values in key order and returns the path of the first
// difference, or nil when they are equal.
func diffJSON(a, b any, fldPath *field.Path) *field.Path {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return fldPath
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, dup := av[k]; !dup {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p := diffJSON(av[k], bv[k], fldPath.Child(k)); p != nil {
				return p
			}
		}
		return nil
	case []any:
		bv, ok := b.([]any)
		if !ok {
			return fldPath
		}
		for i := 0; i < len(av) && i < len(bv); i++ {
			if p := diffJSON(av[i], bv[i], fldPath.Index(i)); p != nil {
				return p
			}
		}
		if len(av) != len(bv) {
			return fldPath
		}
		return nil
	default:
		if a != b {
			return fldPath
		}
		return nil
	}
}
