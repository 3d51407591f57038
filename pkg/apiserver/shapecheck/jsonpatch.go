package shapecheck

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FindInJSONPatch is Find for the values of a JSON patch (RFC 6902) of a t: the value of each
// add, replace or test operation must fit the type at its path, named as a field path
// (/spec/running → spec.running). A value whose path the type does not have (an unknown field,
// a bad index) is only bounded in depth: the patch handler reports such operations itself.
//
// Without it the handler applies the patch, fails to decode the result and answers a 422 naming
// the field "patch" whose value is the whole patched object: tens of kilobytes that bury the one
// line saying what was wrong.
func FindInJSONPatch(doc any, t reflect.Type, _ *field.Path) *field.Error {
	ops, ok := doc.([]any)
	if !ok {
		return nil // not a list of operations: the handler says so
	}
	for i, o := range ops {
		op, ok := o.(map[string]any)
		if !ok {
			continue
		}
		value, hasValue := op["value"]
		kind, _ := op["op"].(string)
		pointer, _ := op["path"].(string)
		if kind == "copy" || kind == "move" {
			if err := movedValue(op, t); err != nil {
				return err
			}
			continue
		}
		if !hasValue || (kind != "add" && kind != "replace" && kind != "test") {
			continue
		}
		p, at := resolvePointer(pointer, t, kind == "add")
		if at == nil {
			if err := depthOf(value, pointerPath(pointer, i), 1); err != nil {
				return err
			}
			continue
		}
		if err := Find(value, at, p); err != nil {
			return err
		}
	}
	return nil
}

// movedValue checks that a copy or move operation takes its value from a place of the same JSON
// kind as the place it puts it (a string cannot become spec.running).
func movedValue(op map[string]any, t reflect.Type) *field.Error {
	from, _ := op["from"].(string)
	to, _ := op["path"].(string)
	fromPath, fromType := resolvePointer(from, t, false)
	toPath, toType := resolvePointer(to, t, true)
	if fromType == nil || toType == nil {
		return nil
	}
	have, want := jsonKind(fromType), jsonKind(toType)
	if have == "" || want == "" || have == want {
		return nil
	}
	return field.Invalid(toPath, from, fmt.Sprintf("must be %s %s, not the %s at %s", article(want), want, have, fromPath))
}

// jsonKind is the JSON kind a value of t is written as, "" when t decodes itself (a quantity is
// a string or a number).
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return ""
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string"
		}
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "number"
	}
	return ""
}

// resolvePointer follows a JSON pointer through type t and returns the field path it names and
// the type of the value there, or a nil type when t has no such place. add inserts into a list
// when the last token indexes one, so its value is an element, as for every other operation.
func resolvePointer(pointer string, t reflect.Type, add bool) (*field.Path, reflect.Type) {
	if pointer == "" || pointer[0] != '/' {
		return nil, nil
	}
	var p *field.Path
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
			return nil, nil // decoded by its own rules: the pointer's way into it is unknown
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldsOf(t)[tok]
			if !ok {
				return nil, nil
			}
			p, t = p.Child(tok), f.typ
		case reflect.Map:
			p, t = mapKey(p, tok), t.Elem()
		case reflect.Slice, reflect.Array:
			i, err := strconv.Atoi(tok)
			switch {
			case tok == "-" && add:
				p = p.Key("-")
			case err == nil && i >= 0 && strconv.Itoa(i) == tok:
				p = p.Index(i)
			default:
				return nil, nil
			}
			t = t.Elem()
		default:
			return nil, nil
		}
	}
	return p, t
}

// pointerPath names a JSON pointer the type does not resolve by its tokens (/spec/x →
// spec.x), or the i-th operation's value when it is no pointer.
func pointerPath(pointer string, i int) *field.Path {
	if pointer == "" || pointer[0] != '/' {
		return field.NewPath(fmt.Sprintf("[%d]", i)).Child("value")
	}
	var p *field.Path
	for _, tok := range strings.Split(pointer[1:], "/") {
		p = mapKey(p, strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
	}
	return p
}
