// Package finalizer builds the merge patch that adds or removes one finalizer of an object.
package finalizer

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type patch struct {
	Metadata struct {
		Finalizers      []string `json:"finalizers"`
		ResourceVersion string   `json:"resourceVersion"`
	} `json:"metadata"`
}

// Has reports whether obj carries finalizer.
func Has(obj metav1.Object, finalizer string) bool {
	for _, f := range obj.GetFinalizers() {
		if f == finalizer {
			return true
		}
	}
	return false
}

// Patch is a JSON merge patch giving obj its finalizers with finalizer added (add) or removed,
// the others kept in order. It carries obj's resourceVersion, so that a concurrent change of the
// list makes the patch fail instead of being lost.
func Patch(obj metav1.Object, finalizer string, add bool) ([]byte, error) {
	var p patch
	p.Metadata.ResourceVersion = obj.GetResourceVersion()
	p.Metadata.Finalizers = []string{}
	for _, f := range obj.GetFinalizers() {
		if f != finalizer {
			p.Metadata.Finalizers = append(p.Metadata.Finalizers, f)
		}
	}
	if add {
		p.Metadata.Finalizers = append(p.Metadata.Finalizers, finalizer)
	}
	return json.Marshal(p)
}
