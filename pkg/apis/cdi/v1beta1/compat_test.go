package v1beta1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	sigsjson "sigs.k8s.io/json"
)

// TestCDIManifestsRoundTrip: CDI objects with every field NativeVirt models (written from CDI's
// containerized-data-importer-api core/v1beta1 types) decode strictly (no unknown or duplicate
// field) and encode back to the same JSON, so field names, omitempty and value types match CDI's.
func TestCDIManifestsRoundTrip(t *testing.T) {
	for file, obj := range map[string]runtime.Object{
		"datavolume.json":     &DataVolume{},
		"datasource.json":     &DataSource{},
		"storageprofile.json": &StorageProfile{},
		"cdiconfig.json":      &CDIConfig{},
	} {
		t.Run(file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			strict, err := sigsjson.UnmarshalStrict(raw, obj)
			if err != nil {
				t.Fatal(err)
			}
			if len(strict) > 0 {
				t.Fatalf("strict decoding: %v", strict)
			}
			out, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			var want, got any
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("round trip (-CDI +NativeVirt):\n%s", diff)
			}
		})
	}
}

// TestEmptyObjectsEncodeAsCDIs: omitempty matches CDI's on empty objects (spec is always
// written; status, the empty sources and checkpoints are not).
func TestEmptyObjectsEncodeAsCDIs(t *testing.T) {
	for name, c := range map[string]struct {
		obj  any
		want string
	}{
		"DataVolume":     {&DataVolume{}, `{"metadata":{},"spec":{},"status":{}}`},
		"DataSource":     {&DataSource{}, `{"metadata":{},"spec":{"source":{}},"status":{"source":{}}}`},
		"StorageProfile": {&StorageProfile{}, `{"metadata":{},"spec":{},"status":{}}`},
		"CDIConfig":      {&CDIConfig{}, `{"metadata":{},"spec":{},"status":{}}`},
	} {
		out, err := json.Marshal(c.obj)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != c.want {
			t.Errorf("%s: %s, want %s", name, out, c.want)
		}
	}
}
