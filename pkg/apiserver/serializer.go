package apiserver

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/nativevirt/nativevirt/pkg/apiserver/shapecheck"
)

// jsonAndYAMLOnly narrows a NegotiatedSerializer to JSON and YAML, whose decoding errors name
// the field they are about.
//
// NativeVirt's types carry no protobuf marshalling. The default codec factory still advertises
// protobuf, so a client preferring it (client-go defaults for built-in types do) would get a 406
// instead of falling back to JSON. Advertising only what we can encode makes negotiation pick JSON.
type jsonAndYAMLOnly struct {
	runtime.NegotiatedSerializer
	// mediaTypes is the wrapped factory's JSON and YAML serializers, chosen once: every request
	// negotiates its media types, several times.
	mediaTypes []runtime.SerializerInfo
}

var _ runtime.NegotiatedSerializer = jsonAndYAMLOnly{}

// onlyJSONAndYAML narrows s to JSON and YAML.
func onlyJSONAndYAML(s runtime.NegotiatedSerializer) jsonAndYAMLOnly {
	var types []runtime.SerializerInfo
	for _, info := range s.SupportedMediaTypes() {
		switch info.MediaType {
		case runtime.ContentTypeJSON, runtime.ContentTypeYAML:
			// Request bodies are decoded by these: their errors name the field (shapecheck).
			info.Serializer = shapecheck.Serializer{Serializer: info.Serializer}
			if info.StrictSerializer != nil {
				info.StrictSerializer = shapecheck.Serializer{Serializer: info.StrictSerializer}
			}
			types = append(types, info)
		}
	}
	return jsonAndYAMLOnly{NegotiatedSerializer: s, mediaTypes: types}
}

// SupportedMediaTypes returns the JSON and YAML serializers of the wrapped factory. Callers
// only read the slice (runtime.NegotiatedSerializer's own factories return a shared one too).
func (s jsonAndYAMLOnly) SupportedMediaTypes() []runtime.SerializerInfo {
	return s.mediaTypes
}
