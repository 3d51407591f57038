package validation

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// summarize maps each error to "Type:field", e.g. "Required:spec.cpu.guest", sorted, so that
// tests assert both the error type and the path.
func summarize(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, strings.TrimPrefix(string(e.Type), "FieldValue")+":"+e.Field)
	}
	sort.Strings(out)
	return out
}

// compareErrs fails t when errs does not summarize to want.
func compareErrs(t *testing.T, want []string, errs field.ErrorList) {
	t.Helper()
	want = append([]string(nil), want...)
	sort.Strings(want)
	if diff := cmp.Diff(want, summarize(errs), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("errors differ (-want +got):\n%s\nfull errors: %v", diff, errs)
	}
}

func ptr[T any](v T) *T { return &v }

func qp(s string) *resource.Quantity {
	v := resource.MustParse(s)
	return &v
}
