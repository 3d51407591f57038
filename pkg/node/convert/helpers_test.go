package convert

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func ptr[T any](v T) *T { return &v }

func qty(s string) resource.Quantity { return resource.MustParse(s) }

// checkErrs fails unless errs is empty (want "") or some error's text
// contains want.
func checkErrs(t *testing.T, errs field.ErrorList, want string) {
	t.Helper()
	if want == "" {
		if len(errs) > 0 {
			t.Fatalf("unexpected errors: %v", errs.ToAggregate())
		}
		return
	}
	if len(errs) == 0 {
		t.Fatalf("no error, want one containing %q", want)
	}
	if !strings.Contains(errs.ToAggregate().Error(), want) {
		t.Fatalf("errors %q do not contain %q", errs.ToAggregate().Error(), want)
	}
}

// cmpIgnoreXMLName ignores the XMLName of decoded structures.
var cmpIgnoreXMLName = cmpopts.IgnoreFields(InstanceMetadata{}, "XMLName")
