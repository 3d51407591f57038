package validation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// apiSupportDoc is the user documentation that lists the unsupported fields.
var apiSupportDoc = filepath.Join("..", "..", "..", "..", "docs", "api-support.md")

const (
	docBegin = "<!-- BEGIN GENERATED: unsupported fields. Regenerate: UPDATE_API_DOCS=1 go test ./pkg/apis/kubevirt/validation -run TestAPISupportDoc -->"
	docEnd   = "<!-- END GENERATED: unsupported fields -->"
)

// documentedFields are the rows of the doc's table: the kubevirt.io kinds', then those of
// instancetype.kubevirt.io.
func documentedFields() []UnsupportedField {
	return append(UnsupportedFields(), UnsupportedInstancetypeFields()...)
}

// unsupportedTable renders documentedFields as the Markdown table of the doc.
func unsupportedTable() string {
	var b strings.Builder
	b.WriteString("| Kind | Field | Refused feature |\n|---|---|---|\n")
	for _, u := range documentedFields() {
		b.WriteString("| " + u.Kind + " | `" + u.Path + "` | " + u.Feature + " |\n")
	}
	return b.String()
}

// TestAPISupportDoc keeps docs/api-support.md in step with the unsupported table: the section
// between the markers must be exactly the table rendered from the code, so every refused field
// is documented and nothing documented is accepted. UPDATE_API_DOCS=1 rewrites the section.
func TestAPISupportDoc(t *testing.T) {
	raw, err := os.ReadFile(apiSupportDoc)
	if err != nil {
		t.Fatalf("reading the API support doc: %v", err)
	}
	doc := string(raw)
	begin, end := strings.Index(doc, docBegin), strings.Index(doc, docEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the markers %q and %q", apiSupportDoc, docBegin, docEnd)
	}
	start := begin + len(docBegin) + 1
	want := unsupportedTable()
	if os.Getenv("UPDATE_API_DOCS") == "1" {
		updated := doc[:start] + want + doc[end:]
		if err := os.WriteFile(apiSupportDoc, []byte(updated), 0o644); err != nil {
			t.Fatalf("writing %s: %v", apiSupportDoc, err)
		}
		return
	}
	if diff := cmp.Diff(want, doc[start:end]); diff != "" {
		t.Errorf("%s is out of date with unsupported.go (-want +got):\n%s\nRegenerate with UPDATE_API_DOCS=1.", apiSupportDoc, diff)
	}
	// Every entry is also findable by its path, as a user would search for it.
	for _, u := range documentedFields() {
		if !strings.Contains(doc, "`"+u.Path+"`") {
			t.Errorf("%s does not mention %s", apiSupportDoc, u.Path)
		}
	}
}
