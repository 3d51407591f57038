package integration

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// equalJSON compares two values by their JSON form (numbers and maps normalised).
func equalJSON(t *testing.T, a, b interface{}) bool {
	t.Helper()
	return cmp.Equal(normalize(t, a), normalize(t, b))
}

func normalize(t *testing.T, v interface{}) interface{} {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var out interface{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return out
}
