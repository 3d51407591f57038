package v1beta1

import (
	"encoding/json"
	"testing"

	sigsjson "sigs.k8s.io/json"
)

// TestUploadTokenRequestJSON: the request virtctl image-upload sends and the answer it reads
// (CDI's upload/v1beta1 JSON) decode strictly and encode back unchanged.
func TestUploadTokenRequestJSON(t *testing.T) {
	const raw = `{"kind":"UploadTokenRequest","apiVersion":"upload.cdi.kubevirt.io/v1beta1","metadata":{"name":"token-for-virtctl","namespace":"vms"},"spec":{"pvcName":"fedora"},"status":{"token":"abc"}}`
	var r UploadTokenRequest
	strict, err := sigsjson.UnmarshalStrict([]byte(raw), &r)
	if err != nil || len(strict) > 0 {
		t.Fatalf("decode: %v %v", err, strict)
	}
	out, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != raw {
		t.Errorf("encoded %s, want %s", out, raw)
	}
	// An empty status is written as {} (CDI's status has no omitempty).
	out, _ = json.Marshal(&UploadTokenRequest{Spec: UploadTokenRequestSpec{PvcName: "x"}})
	if want := `{"metadata":{},"spec":{"pvcName":"x"},"status":{}}`; string(out) != want {
		t.Errorf("encoded %s, want %s", out, want)
	}
}
