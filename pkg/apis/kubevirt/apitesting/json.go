package apitesting

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// AssertSameJSON proves that one of our objects and KubeVirt's type of the same kind have the
// same JSON. ours is filled (see Filler); theirs and oursAgain are empty objects of KubeVirt's
// type and of ours:
//
//  1. ours → JSON → theirs, decoded strictly: every field we model exists in KubeVirt's type
//     with a compatible type;
//  2. theirs → JSON, compared with ours: same keys, same values, same omitempty behaviour;
//  3. KubeVirt's JSON → oursAgain, decoded strictly → JSON, compared again.
func AssertSameJSON(t testing.TB, ours, theirs, oursAgain any) {
	t.Helper()
	oursJSON := MustMarshal(t, ours)
	if err := StrictUnmarshal(oursJSON, theirs); err != nil {
		t.Fatalf("our JSON does not decode strictly into KubeVirt's type: %v\n%s", err, oursJSON)
	}
	theirsJSON := MustMarshal(t, theirs)
	if diff := cmp.Diff(AsGeneric(t, oursJSON), AsGeneric(t, theirsJSON)); diff != "" {
		t.Errorf("JSON differs after NativeVirt → KubeVirt (-nativevirt +kubevirt):\n%s", diff)
	}
	if err := StrictUnmarshal(theirsJSON, oursAgain); err != nil {
		t.Fatalf("KubeVirt's JSON does not decode strictly into our type: %v", err)
	}
	if diff := cmp.Diff(AsGeneric(t, theirsJSON), AsGeneric(t, MustMarshal(t, oursAgain))); diff != "" {
		t.Errorf("JSON differs after KubeVirt → NativeVirt (-kubevirt +nativevirt):\n%s", diff)
	}
}

// MustMarshal is json.Marshal, failing the test on an error.
func MustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return out
}

// StrictUnmarshal decodes data into into and refuses fields into's type does not have.
func StrictUnmarshal(data []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// AsGeneric decodes a JSON object into a map, for comparisons that ignore key order.
func AsGeneric(t testing.TB, data []byte) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("unmarshal generic: %v", err)
	}
	return out
}
