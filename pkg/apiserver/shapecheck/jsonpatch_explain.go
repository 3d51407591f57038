package shapecheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// genericInvalid is the message k8s.io/apiserver's patch handler answers a JSON patch with when
// an operation does not apply to the object (a path to remove is missing, a test fails): a 422
// whose details are empty, the JSON patch library's error dropped.
var genericInvalid = []byte("the server rejected our request due to an error in our request")

// maxExplained bounds the operations applied one by one to find the failing one: each
// application reads the whole object again.
const maxExplained = 1000

// explainJSONPatch serves a JSON patch and, when the handler answers it with that message alone,
// answers instead which operation did not apply and why: it reads the object through next (the
// request was authorized to patch it) and applies the operations one by one.
func (g *PatchGuard) explainJSONPatch(w http.ResponseWriter, r *http.Request, patch []byte, t reflect.Type, info *request.RequestInfo) {
	held := &holdInvalid{ResponseWriter: w}
	g.next.ServeHTTP(held, r)
	if !held.holding {
		return
	}
	if !bytes.Contains(held.body.Bytes(), genericInvalid) {
		held.release()
		return
	}
	current := g.read(r, info)
	status := whichOperation(patch, current, t)
	if status == nil {
		held.release()
		return
	}
	gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	responsewriters.ErrorNegotiated(status, g.codec, gv, w, r)
}

// read returns the JSON of the object r patches, read through next, or nil.
func (g *PatchGuard) read(r *http.Request, info *request.RequestInfo) []byte {
	get := *info
	get.Verb = "get"
	req := r.Clone(request.WithRequestInfo(r.Context(), &get))
	req.Method = http.MethodGet
	req.Body = http.NoBody
	req.ContentLength = 0
	req.URL.RawQuery = ""
	req.Header.Del("Content-Type")
	req.Header.Set("Accept", "application/json")
	rec := &recorder{header: http.Header{}}
	g.next.ServeHTTP(rec, req)
	if rec.code != http.StatusOK {
		return nil
	}
	return rec.body.Bytes()
}

// whichOperation applies patch's operations to current one by one and describes the first that
// fails as a 422 naming its path, or returns nil when none does (the handler's error was about
// something else).
func whichOperation(patch, current []byte, t reflect.Type) *apierrors.StatusError {
	var ops []json.RawMessage
	if current == nil || json.Unmarshal(patch, &ops) != nil || len(ops) > maxExplained {
		return nil
	}
	doc := current
	for i, raw := range ops {
		one, err := jsonpatch.DecodePatch(append(append([]byte("["), raw...), ']'))
		if err != nil || len(one) != 1 {
			return nil
		}
		next, err := one.Apply(doc)
		if err == nil {
			doc = next
			continue
		}
		kind, what := one[0].Kind(), one[0].Kind()
		where := fmt.Sprintf("[%d]", i) // the operation, when it names no path
		if pointer, perr := one[0].Path(); perr == nil {
			what, where = kind+" "+pointer, pointer
			if p, _ := resolvePointer(pointer, t, kind == "add"); p != nil {
				where = p.String()
			}
		}
		msg := fmt.Sprintf("json patch operation %d (%s) does not apply: %v", i, what, err)
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
			Message: msg,
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{
				Type: metav1.CauseTypeFieldValueInvalid, Field: where, Message: msg,
			}}},
		}}
	}
	return nil
}

// holdInvalid passes a response through unless its status is 422, which it holds back so that
// the guard can replace it.
type holdInvalid struct {
	http.ResponseWriter
	holding, decided bool
	code             int
	body             bytes.Buffer
}

func (h *holdInvalid) WriteHeader(code int) {
	if h.decided {
		return
	}
	h.decided = true
	if code == http.StatusUnprocessableEntity {
		h.holding, h.code = true, code
		return
	}
	h.ResponseWriter.WriteHeader(code)
}

func (h *holdInvalid) Write(b []byte) (int, error) {
	if !h.decided {
		h.WriteHeader(http.StatusOK)
	}
	if h.holding {
		return h.body.Write(b)
	}
	return h.ResponseWriter.Write(b)
}

// release writes the held response as it was.
func (h *holdInvalid) release() {
	h.ResponseWriter.WriteHeader(h.code)
	_, _ = h.ResponseWriter.Write(h.body.Bytes())
}

// recorder keeps a response in memory.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(b)
}
