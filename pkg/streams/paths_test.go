package streams

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPathRoundTrip(t *testing.T) {
	for _, a := range Actions {
		want := Target{Namespace: "ns-1", Name: "vm.a-1", Action: a}
		if a.TakesPort() {
			want.Forward = ForwardedPort{Port: 22, Protocol: "udp"}
		}
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
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/console", want: Target{Namespace: "default", Name: "testvm", Action: ActionConsole}},
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/softreboot", want: Target{Namespace: "default", Name: "testvm", Action: ActionSoftReboot}},
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/portforward/8080/tcp",
			want: Target{Namespace: "default", Name: "testvm", Action: ActionPortForward, Forward: ForwardedPort{Port: 8080, Protocol: "tcp"}}},
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/portforward/8080", wantErr: true},
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/portforward/0/tcp", wantErr: true},
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/portforward/65536/tcp", wantErr: true},
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/portforward/80/sctp", wantErr: true},
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/portforward/80/tcp/x", wantErr: true},
		{path: "/v1/namespaces/default/virtualmachineinstances/testvm/pause/80/tcp", wantErr: true},
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
		ActionConsole: http.MethodGet, ActionVNC: http.MethodGet, ActionPortForward: http.MethodGet,
		ActionGuestOSInfo: http.MethodGet, ActionUserList: http.MethodGet, ActionFileSystemList: http.MethodGet,
		ActionScreenshot: http.MethodGet,
		ActionPause:      http.MethodPut, ActionUnpause: http.MethodPut, ActionSoftReboot: http.MethodPut,
		ActionFreeze: http.MethodPut, ActionUnfreeze: http.MethodPut,
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

func TestParseForwardedPort(t *testing.T) {
	for _, tc := range []struct {
		segments []string
		want     ForwardedPort
		wantErr  bool
	}{
		{segments: []string{"22"}, want: ForwardedPort{Port: 22, Protocol: "tcp"}},
		{segments: []string{"53", "udp"}, want: ForwardedPort{Port: 53, Protocol: "udp"}},
		{segments: []string{"65535", "tcp"}, want: ForwardedPort{Port: 65535, Protocol: "tcp"}},
		{segments: nil, wantErr: true},
		{segments: []string{""}, wantErr: true},
		{segments: []string{"ssh"}, wantErr: true},
		{segments: []string{"022"}, wantErr: true},
		{segments: []string{"+22"}, wantErr: true},
		{segments: []string{"-1"}, wantErr: true},
		{segments: []string{"22", "TCP"}, wantErr: true},
		{segments: []string{"22", "tcp", "x"}, wantErr: true},
	} {
		got, err := ParseForwardedPort(tc.segments)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseForwardedPort(%q) = %+v, %v; want %+v, error %v", tc.segments, got, err, tc.want, tc.wantErr)
		}
	}
}
