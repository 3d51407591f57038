package shapecheck

import (
	"reflect"
	"strings"
	"sync"
)

// fieldInfo is what the walk needs of one JSON field of a struct.
type fieldInfo struct {
	typ reflect.Type
	// mergeKey is the patchMergeKey of a list whose patchStrategy merges (strategic merge patch).
	mergeKey string
}

// fieldCache holds the JSON fields of each struct type walked (reflect.Type → map[string]fieldInfo).
var fieldCache sync.Map

// fieldsOf returns the JSON fields of struct type t by their JSON names, those of embedded and
// `json:",inline"` structs included, as encoding/json decodes them.
func fieldsOf(t reflect.Type) map[string]fieldInfo {
	if cached, ok := fieldCache.Load(t); ok {
		return cached.(map[string]fieldInfo)
	}
	fields := map[string]fieldInfo{}
	collect(t, fields, 0)
	fieldCache.Store(t, fields)
	return fields
}

func collect(t reflect.Type, into map[string]fieldInfo, depth int) {
	if depth > 8 {
		return
	}
	var embedded []reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		opts = "," + opts + ","
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ((f.Anonymous && name == "") || strings.Contains(opts, ",inline,")) {
			embedded = append(embedded, ft)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		info := fieldInfo{typ: f.Type}
		if strings.Contains(opts, ",string,") {
			info.typ = reflect.TypeFor[string]()
		}
		if ft.Kind() == reflect.Slice && strings.Contains(f.Tag.Get("patchStrategy"), "merge") {
			info.mergeKey = f.Tag.Get("patchMergeKey")
		}
		into[name] = info
	}
	// An embedded struct's fields come after the struct's own: the shallower field wins, as in
	// encoding/json.
	for _, et := range embedded {
		inner := map[string]fieldInfo{}
		collect(et, inner, depth+1)
		for name, info := range inner {
			if _, taken := into[name]; !taken {
				into[name] = info
			}
		}
	}
}
