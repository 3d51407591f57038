package shapecheck

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestCheckBody(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"spec":{"template":{"spec":{"domain":{"resources":{"requests":{"memory":"notaquantity"}}}}}}}`,
			"the request body: spec.template.spec.domain.resources.requests.memory: Invalid value"},
		{`{"spec":{"running":true}}`, ""},
		{`{"spec":`, ""}, // not JSON: the handler's decoder says so
		{strings.Repeat(" ", 150) + `{"spec":{"running":"x"}}`, ""}, // past the limit: the handler's
	} {
		r, _ := http.NewRequest(http.MethodPut, "/", strings.NewReader(c.body))
		err := CheckBody(r, vmType, 120)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40s: got %v, want %q", c.body, err, c.want)
		}
		if rest, _ := io.ReadAll(r.Body); string(rest) != c.body {
			t.Errorf("%.40s: the handler reads %q, want the body as it came", c.body, rest)
		}
	}
}
