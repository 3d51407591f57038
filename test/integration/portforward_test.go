package integration

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// TestPortForwardThroughNodeAgent: KubeVirt's portforward subresource of instances and VMs
// (subresources.kubevirt.io, as virtctl port-forward calls it) reaches the instance's node agent
// with the port and protocol, carries bytes both ways, and refuses bad ports, instances that do
// not run and plain GETs with a clear status.
func TestPortForwardThroughNodeAgent(t *testing.T) {
	w := startStreamWorld(t, streams.APIServerCommonName)
	c := w.srv.Clientset(t)
	client := w.srv.HTTPClient(t)
	running := makeVM(t, c, "pf-vm", vmState{runStrategy: kubevirtv1.RunStrategyAlways, vmiPhase: kubevirtv1.Running})
	w.agent.run(running.Name, running.UID)
	makeVM(t, c, "pf-stopped", vmState{runStrategy: kubevirtv1.RunStrategyHalted})
	makeVMI(t, c, "pf-scheduled", kubevirtv1.Scheduled, false)

	for _, tc := range []struct{ resource, action, seen string }{
		{"virtualmachineinstances", "portforward/8080", "GET default/pf-vm/portforward/8080/tcp uid-ok"},
		{"virtualmachineinstances", "portforward/53/udp", "GET default/pf-vm/portforward/53/udp uid-ok"},
		{"virtualmachines", "portforward/22/tcp", "GET default/pf-vm/portforward/22/tcp uid-ok"},
	} {
		conn, resp, err := dialResourceStream(t, w.srv, "sub", tc.resource, "pf-vm", tc.action)
		if err != nil {
			t.Fatalf("%s %s: dial: %v (response %v)", tc.resource, tc.action, err, resp)
		}
		want := []byte("SSH-2.0-client\r\n\x00\xff")
		if _, err := conn.Write(want); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(want))
		if _, err := io.ReadFull(conn, got); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s %s: echo %q, %v; want %q", tc.resource, tc.action, got, err, want)
		}
		_ = conn.Close()
		if seen := w.agent.seen(); len(seen) == 0 || seen[len(seen)-1] != tc.seen {
			t.Errorf("%s %s: the agent saw %q, want last %q", tc.resource, tc.action, seen, tc.seen)
		}
	}

	for _, tc := range []struct {
		variant, resource, name, action string
		wantCode                        int
		wantMsg                         string
	}{
		{"sub", "virtualmachineinstances", "pf-vm", "portforward", http.StatusBadRequest, "needs a port"},
		{"sub", "virtualmachineinstances", "pf-vm", "portforward/0", http.StatusBadRequest, "invalid port"},
		{"sub", "virtualmachineinstances", "pf-vm", "portforward/ssh", http.StatusBadRequest, "invalid port"},
		{"sub", "virtualmachineinstances", "pf-vm", "portforward/22/sctp", http.StatusBadRequest, "invalid protocol"},
		{"sub", "virtualmachineinstances", "pf-vm", "portforward/22/tcp/x", http.StatusBadRequest, "{port}/{protocol}"},
		{"sub", "virtualmachineinstances", "pf-scheduled", "portforward/22", http.StatusConflict, "VMI is not running"},
		{"sub", "virtualmachineinstances", "pf-vm", "portforward/9", http.StatusConflict, "connecting to port 9/tcp: connection refused"},
		{"sub", "virtualmachineinstances", "missing", "portforward/22", http.StatusNotFound, "not found"},
		{"sub", "virtualmachines", "pf-stopped", "portforward/22", http.StatusConflict, "VM is not running"},
		{"sub", "virtualmachines", "missing", "portforward/22", http.StatusNotFound, "virtualmachines"},
		{"sub", "virtualmachineinstances", "pf-vm", "console/22", http.StatusNotFound, ""},
		{"v1", "virtualmachineinstances", "pf-vm", "portforward/22", http.StatusNotFound, ""},
	} {
		_, resp, err := dialResourceStream(t, w.srv, tc.variant, tc.resource, tc.name, tc.action)
		if err == nil || resp == nil {
			t.Errorf("%s %s/%s/%s: dial succeeded, want %d", tc.variant, tc.resource, tc.name, tc.action, tc.wantCode)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.wantCode || !strings.Contains(string(body), tc.wantMsg) {
			t.Errorf("%s %s/%s/%s: %d %s, want %d with %q", tc.variant, tc.resource, tc.name, tc.action, resp.StatusCode, body, tc.wantCode, tc.wantMsg)
		}
	}
	url := w.srv.Config.Host + actionPath("sub", "virtualmachineinstances", "pf-vm", "portforward/22")
	if resp := do(t, client, http.MethodGet, url, "", nil); resp.code != http.StatusBadRequest || !strings.Contains(resp.body, "WebSocket") {
		t.Errorf("portforward without upgrade: %d %s, want 400", resp.code, resp.body)
	}

	// Only the forwards reached the agent, the refused one included.
	want := []string{
		"GET default/pf-vm/portforward/8080/tcp uid-ok",
		"GET default/pf-vm/portforward/53/udp uid-ok",
		"GET default/pf-vm/portforward/22/tcp uid-ok",
		"GET default/pf-vm/portforward/9/tcp uid-ok",
	}
	if diff := cmp.Diff(want, w.agent.seen()); diff != "" {
		t.Errorf("requests at the agent (-want +got):\n%s", diff)
	}
}
