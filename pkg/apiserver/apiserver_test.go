package apiserver

import (
	"bytes"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// writeCounter records how a response is written.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// The kubevirt.io group writes a list into the response item by item (a list of 10,000
// VirtualMachines is ~50 MB of JSON), and what it writes is the list.
func TestGroupStreamsListsToTheResponse(t *testing.T) {
	group := kubevirtGroupInfo()
	info, ok := runtime.SerializerInfoForMediaType(group.NegotiatedSerializer.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		t.Fatal("the group serves no JSON")
	}
	vm, err := runtime.Decode(Codecs.LegacyCodec(kubevirtv1.SchemeGroupVersion), []byte(storedVM))
	if err != nil {
		t.Fatal(err)
	}
	list := &kubevirtv1.VirtualMachineList{}
	list.ResourceVersion = "9"
	for _, name := range []string{"vm1", "vm2", "vm3"} {
		item := vm.(*kubevirtv1.VirtualMachine).DeepCopy()
		item.Name = name
		list.Items = append(list.Items, *item)
	}
	var w writeCounter
	enc := group.NegotiatedSerializer.EncoderForVersion(info.Serializer, kubevirtv1.SchemeGroupVersion)
	if err := enc.Encode(list, &w); err != nil {
		t.Fatal(err)
	}
	if w.writes <= len(list.Items) {
		t.Errorf("the list of %d items was written in %d writes, want one or more per item", len(list.Items), w.writes)
	}
	got, err := runtime.Decode(Codecs.UniversalDecoder(kubevirtv1.SchemeGroupVersion), w.Bytes())
	if err != nil {
		t.Fatalf("decode what was written: %v\n%s", err, w.Bytes())
	}
	list.APIVersion, list.Kind = kubevirtv1.SchemeGroupVersion.String(), "VirtualMachineList"
	if d := cmp.Diff(list, got); d != "" {
		t.Errorf("written list differs (-want +got):\n%s", d)
	}
}

// The group advertises JSON and YAML, each with the wrapped factory's serializers, and nothing
// else (no protobuf, which its types cannot encode).
func TestGroupServesJSONAndYAMLOnly(t *testing.T) {
	group := kubevirtGroupInfo()
	var types []string
	for _, info := range group.NegotiatedSerializer.SupportedMediaTypes() {
		types = append(types, info.MediaType)
		if info.Serializer == nil {
			t.Errorf("%s has no serializer", info.MediaType)
		}
	}
	if want := []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML}; !slices.Equal(types, want) {
		t.Errorf("media types %v, want %v", types, want)
	}
	json, _ := runtime.SerializerInfoForMediaType(group.NegotiatedSerializer.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if json.StreamSerializer == nil {
		t.Error("JSON has no stream serializer: watches could not be served")
	}
}
