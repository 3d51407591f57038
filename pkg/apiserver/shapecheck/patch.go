package shapecheck

import (
	"bytes"
	"io"
	"net/http"
	"reflect"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// PatchGuard refuses, with a 400 naming the field, the patches of served objects whose values do
// not fit the type. For strategic merge patches and apply configurations it refuses what
// k8s.io/apimachinery's strategicpatch or structured-merge-diff would answer with a 500 or a
// panic: a merge list holding something other than objects, a merge key holding an object, a
// value of the wrong JSON kind, a field the type does not have (apply), a document nested deeper
// than MaxDepth. For merge patches and JSON patches it refuses values of the wrong kind, which the
// handler would answer with a 422 about the field "patch" carrying the whole patched object.
// Every other request passes untouched.
type PatchGuard struct {
	next  http.Handler
	codec runtime.NegotiatedSerializer
	// types are the Go types of the served resources, by group, version and resource.
	types map[schema.GroupVersionResource]reflect.Type
	// maxBody is the server's request body limit: a longer body is left to the handler's 413.
	maxBody int64
}

// NewPatchGuard guards next for every kind that scheme knows in groups. codec writes the errors.
func NewPatchGuard(next http.Handler, scheme *runtime.Scheme, codec runtime.NegotiatedSerializer, maxBody int64, groups ...string) *PatchGuard {
	served := map[string]bool{}
	for _, g := range groups {
		served[g] = true
	}
	byResource := map[schema.GroupVersionResource]reflect.Type{}
	for gvk, t := range scheme.AllKnownTypes() {
		if !served[gvk.Group] {
			continue
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		byResource[plural] = t
	}
	return &PatchGuard{next: next, codec: codec, types: byResource, maxBody: maxBody}
}

// ServeHTTP checks a patch of a served resource, then hands the request on
// with its body as it came.
func (g *PatchGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	find, ok := finders[types.PatchType(mediaType(r))]
	if r.Method != http.MethodPatch || !ok {
		g.next.ServeHTTP(w, r)
		return
	}
	info, ok := request.RequestInfoFrom(r.Context())
	if !ok || !info.IsResourceRequest || (info.Subresource != "" && info.Subresource != "status" && info.Subresource != "scale") {
		g.next.ServeHTTP(w, r)
		return
	}
	gvr := schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}
	t, ok := g.types[gvr]
	if !ok {
		g.next.ServeHTTP(w, r)
		return
	}
	if info.Subresource == "scale" {
		t = scaleType // the scale subresource serves autoscaling/v1's Scale, whatever the kind
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, g.maxBody+1))
	if err != nil {
		g.next.ServeHTTP(w, r) // the handler reads the body again and reports its own error
		return
	}
	r.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(body), r.Body), Closer: r.Body}
	if int64(len(body)) > g.maxBody {
		g.next.ServeHTTP(w, r)
		return
	}
	doc, err := parse(body)
	if err != nil {
		g.next.ServeHTTP(w, r) // not JSON: the handler says so with a 400
		return
	}
	if fe := find.find(doc, t, nil); fe != nil {
		status := apierrors.NewBadRequest(find.what + ": " + describe(fe))
		gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
		responsewriters.ErrorNegotiated(status, g.codec, gv, w, r)
		return
	}
	if types.PatchType(mediaType(r)) == types.JSONPatchType {
		g.explainJSONPatch(w, r, body, t, info)
		return
	}
	g.next.ServeHTTP(w, r)
}

var scaleType = reflect.TypeFor[autoscalingv1.Scale]()

// finders are the checks of the patch types the guard looks at.
var finders = map[types.PatchType]struct {
	what string
	find func(any, reflect.Type, *field.Path) *field.Error
}{
	types.StrategicMergePatchType: {"strategic merge patch", FindInPatch},
	types.MergePatchType:          {"merge patch", Find},
	types.JSONPatchType:           {"json patch", FindInJSONPatch},
	types.ApplyYAMLPatchType:      {"apply configuration", FindInApply},
}

type readCloser struct {
	io.Reader
	io.Closer
}

// mediaType is the request's Content-Type without parameters.
func mediaType(r *http.Request) string {
	ct := r.Header.Get("Content-Type")
	for i := 0; i < len(ct); i++ {
		if ct[i] == ';' || ct[i] == ' ' {
			return ct[:i]
		}
	}
	return ct
}
