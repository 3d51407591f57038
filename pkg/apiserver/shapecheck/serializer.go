package shapecheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Serializer is a request serializer whose decoding errors name the field they are about.
// Encoding is the wrapped serializer's, untouched.
type Serializer struct {
	runtime.Serializer
}

var (
	_ runtime.Serializer           = Serializer{}
	_ runtime.EncoderWithAllocator = Serializer{}
)

// Decode decodes with the wrapped serializer. When that fails with an error that is not a
// strict decoding error (unknown or duplicate fields, which the handlers turn into warnings or
// errors themselves), the document is walked beside into's type and the first field that does
// not fit is put in front of the error.
func (s Serializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := s.Serializer.Decode(data, defaults, into)
	if err == nil || runtime.IsStrictDecodingError(err) || into == nil {
		return obj, gvk, err
	}
	t := reflect.TypeOf(into)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return obj, gvk, err
	}
	doc, perr := parse(data)
	if perr != nil {
		return obj, gvk, err
	}
	if fe := Find(doc, t.Elem(), nil); fe != nil {
		return obj, gvk, fmt.Errorf("%s", describe(fe))
	}
	return obj, gvk, err
}

// EncodeWithAllocator keeps the wrapped serializer's allocation-saving encoding (the handlers
// look for it) where it has one.
func (s Serializer) EncodeWithAllocator(obj runtime.Object, w io.Writer, a runtime.MemoryAllocator) error {
	if e, ok := s.Serializer.(runtime.EncoderWithAllocator); ok {
		return e.EncodeWithAllocator(obj, w, a)
	}
	return s.Encode(obj, w)
}

// parse reads a JSON or YAML document with numbers kept as json.Number.
func parse(data []byte) (any, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("empty document")
	}
	if trimmed[0] != '{' && trimmed[0] != '[' {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, err
		}
		trimmed = j
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
}
