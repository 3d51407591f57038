package apiserver

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// jsonAndYAMLOnly narrows a NegotiatedSerializer to JSON and YAML.
//
// NativeVirt's types carry no protobuf marshalling. The default codec factory still advertises
// protobuf, so a client preferring it (client-go defaults for built-in types do) would get a 406
// instead of falling back to JSON. Advertising only what we can encode makes negotiation pick JSON.
type jsonAndYAMLOnly struct {
	runtime.NegotiatedSerializer
}

var _ runtime.NegotiatedSerializer = jsonAndYAMLOnly{}

// SupportedMediaTypes returns the JSON and YAML serializers of the wrapped factory.
func (s jsonAndYAMLOnly) SupportedMediaTypes() []runtime.SerializerInfo {
	var out []runtime.SerializerInfo
	for _, info := range s.NegotiatedSerializer.SupportedMediaTypes() {
		switch info.MediaType {
		case runtime.ContentTypeJSON, runtime.ContentTypeYAML:
			out = append(out, info)
		}
	}
	return out
}
