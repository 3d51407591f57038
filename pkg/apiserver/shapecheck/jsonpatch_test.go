package shapecheck

import (
	"strings"
	"testing"
)

func TestFindInJSONPatch(t *testing.T) {
	deep := strings.Repeat(`{"a":`, MaxDepth+2) + `1` + strings.Repeat("}", MaxDepth+2)
	cases := []struct {
		name, doc             string
		wantField, wantDetail string
	}{
		{name: "valid operations", doc: `[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"a","emptyDisk":{"capacity":"1Gi"}}},
			{"op":"replace","path":"/spec/running","value":true},{"op":"test","path":"/metadata/labels/app~1name","value":"x"},
			{"op":"remove","path":"/spec/template"},{"op":"copy","from":"/metadata/labels","path":"/metadata/annotations"}]`},
		{name: "a string for a bool", doc: `[{"op":"add","path":"/spec/running","value":"yes"}]`,
			wantField: "spec.running", wantDetail: "must be a boolean, not a string"},
		{name: "a number in a list of objects", doc: `[{"op":"add","path":"/spec/template/spec/volumes","value":[-1]}]`,
			wantField: "spec.template.spec.volumes[0]", wantDetail: "must be an object"},
		{name: "an object as an element's name", doc: `[{"op":"add","path":"/spec/template/spec/volumes/0","value":{"name":{"a":1}}}]`,
			wantField: "spec.template.spec.volumes[0].name", wantDetail: "must be a string"},
		{name: "appending a number", doc: `[{"op":"add","path":"/spec/template/spec/volumes/-","value":5}]`,
			wantField: "spec.template.spec.volumes[-]"},
		{name: "a bad quantity in a map", doc: `[{"op":"replace","path":"/spec/template/spec/domain/resources/requests/memory","value":"notaquantity"}]`,
			wantField: "spec.template.spec.domain.resources.requests.memory", wantDetail: "quantities must match"},
		{name: "an escaped label key", doc: `[{"op":"add","path":"/metadata/labels/app~1name","value":{}}]`,
			wantField: "metadata.labels[app/name]", wantDetail: "must be a string"},
		{name: "too deep where the type is known", doc: `[{"op":"add","path":"/metadata/annotations","value":` + deep + `}]`,
			wantField: "metadata.annotations.a", wantDetail: "must be a string"},
		{name: "too deep under an unknown field", doc: `[{"op":"add","path":"/spec/x","value":` + deep + `}]`,
			wantDetail: "nested more than"},
		{name: "a string copied onto a bool", doc: `[{"op":"copy","from":"/metadata/name","path":"/spec/running"}]`,
			wantField: "spec.running", wantDetail: "not the string at metadata.name"},
		{name: "a list moved onto an object", doc: `[{"op":"move","from":"/spec/template/spec/volumes","path":"/spec/template/spec/domain"}]`,
			wantField: "spec.template.spec.domain", wantDetail: "must be an object, not the array"},
		{name: "unknown places and malformed operations are the handler's", doc: `[{"op":"add","path":"/spec/nothing/0","value":"x"},
			{"op":"add","path":"/spec/template/spec/volumes/abc","value":1},{"op":"replace","path":"spec","value":1},{"op":"move"},7,
			{"op":"explode","path":"/spec/running","value":"x"},{"op":"remove","path":"/spec/running","value":"x"}]`},
		{name: "not a list", doc: `{"op":"add"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkErr(t, FindInJSONPatch(mustParse(t, c.doc), vmType, nil), c.wantField, c.wantDetail)
		})
	}
}
