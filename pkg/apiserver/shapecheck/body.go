package shapecheck

import (
	"bytes"
	"io"
	"net/http"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// CheckBody reads r's body (up to maxBody bytes; a longer one is the handler's to refuse) and
// returns a 400 naming the first value that does not fit t, or nil. The body is left for the
// handler to read again, as it came.
func CheckBody(r *http.Request, t reflect.Type, maxBody int64) error {
	if r.Body == nil {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(body), r.Body), Closer: r.Body}
	if err != nil || int64(len(body)) > maxBody {
		return nil
	}
	doc, err := parse(body)
	if err != nil {
		return nil // not JSON: the handler's decoder says so
	}
	if fe := Find(doc, t, nil); fe != nil {
		return apierrors.NewBadRequest("the request body: " + describe(fe))
	}
	return nil
}
