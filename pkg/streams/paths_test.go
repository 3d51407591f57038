package streams

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPathRoundTrip(t *testing.T) {
	for _, a := range Actions {
		want := Target{Namespace: "ns-1", Name: "vm.a-1", Action: a}
		got, err := ParsePath(want.Path())
		if err != nil {
			t.Fatalf("ParsePath(%q): %v", want.Path(), err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("round trip of %q (-want +got):\n%s", a, diff)
		}
	}
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		path    string
		want    Target
		wantErr bool
	}{
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/console", want: Target{"default", "testvm", ActionConsole}},
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/softreboot", want: Target{"default", "testvm", ActionSoftReboot}},
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/reboot", wantErr: true},
		{path: "/v1/namespaces/default/virtualmachines/testvm/console", wantErr: true},
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm", wantErr: true},
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/console/extra", wantErr: true},
		{path: "/v1/namespaces/../virtualmachineinstances/testvm/console", wantErr: true},
		{path: "/v1/namespaces/default/virtualmachineinstances/Bad_Name/console", wantErr: true},
		{path: "/v1/namespaces//virtualmachineinstances/x/vnc", wantErr: true},
		{path: "/v2/namespaces/default/virtualmachineinstances/testvm/vnc", wantErr: true},
		{path: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParsePath(tt.path)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParsePath(%q) error = %v, wantErr %v", tt.path, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParsePath(%q) (-want +got):\n%s", tt.path, diff)
		}
	}
}

func TestActionMethod(t *testing.T) {
	want := map[Action]string{
		ActionConsole: http.MethodGet, ActionVNC: http.MethodGet,
		ActionPause: http.MethodPut, ActionUnpause: http.MethodPut, ActionSoftReboot: http.MethodPut,
	}
	got := map[Action]string{}
	for _, a := range Actions {
		got[a] = a.Method()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("methods (-want +got):\n%s", diff)
	}
}

func TestTargetURL(t *testing.T) {
	got := Target{Namespace: "ns", Name: "vmi", Action: ActionPause}.URL("10.0.0.1:8186")
	if want := "https://10.0.0.1:8186/v1/namespaces/ns/virtualmachineinstances/vmi/pause"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
}
