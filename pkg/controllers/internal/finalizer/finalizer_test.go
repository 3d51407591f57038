package finalizer

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPatch(t *testing.T) {
	tests := []struct {
		name  string
		have  []string
		add   bool
		want  string
		isHas bool
	}{
		{"add to none", nil, true, `{"metadata":{"finalizers":["x"],"resourceVersion":"7"}}`, false},
		{"add keeps the others, once", []string{"a", "x", "b"}, true, `{"metadata":{"finalizers":["a","b","x"],"resourceVersion":"7"}}`, true},
		{"remove", []string{"a", "x"}, false, `{"metadata":{"finalizers":["a"],"resourceVersion":"7"}}`, true},
		{"remove the last one sends an empty list", []string{"x"}, false, `{"metadata":{"finalizers":[],"resourceVersion":"7"}}`, true},
	}
	for _, tt := range tests {
		obj := &metav1.ObjectMeta{ResourceVersion: "7", Finalizers: tt.have}
		got, err := Patch(obj, "x", tt.add)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: %s, %v; want %s", tt.name, got, err, tt.want)
		}
		if Has(obj, "x") != tt.isHas {
			t.Errorf("%s: Has = %v", tt.name, !tt.isHas)
		}
	}
}
