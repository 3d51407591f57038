package shapecheck

import (
	"strings"
	"testing"
)

func TestWhichOperation(t *testing.T) {
	current := []byte(`{"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"running":true,"template":{"spec":{"volumes":[{"name":"v"}]}}}}`)
	cases := []struct {
		name, patch            string
		wantField, wantMessage string
	}{
		{name: "every operation applies", patch: `[{"op":"remove","path":"/metadata/labels/x"},{"op":"test","path":"/spec/running","value":true}]`},
		{name: "a missing path to remove", patch: `[{"op":"add","path":"/metadata/labels/z","value":"w"},{"op":"remove","path":"/spec/template/spec/volumes/3"}]`,
			wantField: "spec.template.spec.volumes[3]", wantMessage: "json patch operation 1 (remove /spec/template/spec/volumes/3) does not apply"},
		{name: "a failed test", patch: `[{"op":"test","path":"/metadata/name","value":"b"}]`,
			wantField: "metadata.name", wantMessage: "json patch operation 0 (test /metadata/name) does not apply"},
		{name: "a move naming nothing", patch: `[{"op":"move"}]`, wantField: "[0]", wantMessage: "json patch operation 0 (move) does not apply"},
		{name: "a path the type does not have", patch: `[{"op":"remove","path":"/spec/nothing"}]`,
			wantField: "/spec/nothing", wantMessage: "(remove /spec/nothing)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status := whichOperation([]byte(c.patch), current, vmType)
			if c.wantMessage == "" {
				if status != nil {
					t.Fatalf("got %v, want none", status)
				}
				return
			}
			if status == nil {
				t.Fatalf("got none, want %q", c.wantMessage)
			}
			s := status.ErrStatus
			if s.Code != 422 || !strings.Contains(s.Message, c.wantMessage) || len(s.Details.Causes) != 1 || s.Details.Causes[0].Field != c.wantField {
				t.Fatalf("got %d %q %+v, want 422 %q naming %q", s.Code, s.Message, s.Details, c.wantMessage, c.wantField)
			}
		})
	}
}
