package integration

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apiserver/app"
	"github.com/nativevirt/nativevirt/pkg/streams"
	"github.com/nativevirt/nativevirt/pkg/streams/streamstest"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// closedGuestPort is a guest port nothing serves: the fake agent refuses to forward it, as the
// real one does when the guest refuses the connection.
const closedGuestPort = 9

// fakeAgent is a node agent speaking the streams protocol: it echoes console and vnc bytes and
// records every request it gets.
type fakeAgent struct {
	srv *httptest.Server

	mu       sync.Mutex
	uids     map[string]types.UID // name → uid of the domain it runs
	requests []string             // "PUT ns/name/pause uid-ok"
	leaked   []string             // credentials that should never reach the agent
}

func newFakeAgent(t *testing.T, ca *streamstest.CA) *fakeAgent {
	t.Helper()
	pair, err := ca.ServerCert("nativevirt-handler", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := streams.ServerTLSConfig(ca.CertPEM, pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	a := &fakeAgent{uids: map[string]types.UID{}}
	a.srv = httptest.NewUnstartedServer(http.HandlerFunc(a.serve))
	a.srv.TLS = cfg
	a.srv.StartTLS()
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAgent) endpoint() string { return a.srv.Listener.Addr().String() }

func (a *fakeAgent) run(name string, uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.uids[name] = uid
}

func (a *fakeAgent) seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.requests...)
}

func (a *fakeAgent) serve(w http.ResponseWriter, r *http.Request) {
	target, err := streams.ParsePath(r.URL.Path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	a.mu.Lock()
	for _, h := range []string{"Authorization", "Cookie", "X-Remote-User", "Impersonate-User", "X-Private"} {
		if r.Header.Get(h) != "" {
			a.leaked = append(a.leaked, h)
		}
	}
	uid, known := a.uids[target.Name]
	gotUID := r.Header.Get(streams.VMIUIDHeader)
	match := "uid-ok"
	if types.UID(gotUID) != uid {
		match = "uid-mismatch"
	}
	what := target.Namespace + "/" + target.Name + "/" + string(target.Action)
	if target.Action.TakesPort() {
		what += fmt.Sprintf("/%d/%s", target.Forward.Port, target.Forward.Protocol)
	}
	if r.URL.RawQuery != "" {
		what += "?" + r.URL.RawQuery
	}
	a.requests = append(a.requests, r.Method+" "+what+" "+match)
	a.mu.Unlock()
	switch {
	case !known:
		http.Error(w, "no domain for this VMI", http.StatusNotFound)
	case match != "uid-ok":
		http.Error(w, "the domain belongs to another VMI", http.StatusConflict)
	case r.Method != target.Action.Method():
		http.Error(w, "wrong method", http.StatusMethodNotAllowed)
	case target.Action.TakesPort() && target.Forward.Port == closedGuestPort:
		http.Error(w, fmt.Sprintf("connecting to port %d/tcp: connection refused", closedGuestPort), http.StatusConflict)
	case target.Action == streams.ActionScreenshot:
		w.Header().Set("Content-Type", "image/png")
		fmt.Fprintf(w, "\x89PNG of %s", target.Name)
	case target.Action.IsQuery():
		// A guest agent that knows its host name and one user.
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"kind":"VirtualMachineInstanceGuestAgentInfo","apiVersion":"subresources.kubevirt.io/v1","hostname":%q,"action":%q}`,
			target.Name, target.Action)
	case target.Action.IsStream():
		ws, err := streams.Upgrade(w, r)
		if err != nil {
			return
		}
		guest, agentSide := net.Pipe()
		go func() { _, _ = io.Copy(guest, guest) }()
		_ = streams.Pipe(r.Context(), ws, agentSide)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// streamWorld is an apiserver wired to a fake node agent on node-1.
type streamWorld struct {
	srv   *framework.Server
	agent *fakeAgent
	ca    *streamstest.CA
}

// startStreamWorld starts the apiserver with node agent certificates for clientCN; node-1
// points at the fake agent, node-2 has no endpoint annotation.
func startStreamWorld(t *testing.T, clientCN string) streamWorld {
	t.Helper()
	ca, err := streamstest.NewCA("nativevirt node CA")
	if err != nil {
		t.Fatal(err)
	}
	agent := newFakeAgent(t, ca)
	client, err := ca.ClientCert(clientCN)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kube := fake.NewSimpleClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Annotations: map[string]string{
			streams.HandlerEndpointAnnotation: agent.endpoint()}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-2"}},
	)
	srv := framework.StartWithOptions(t, "", func(o *app.Options) {
		o.KubeClient = kube
		o.NodeAgent = app.NodeAgentOptions{
			CAFile:         write("ca.crt", ca.CertPEM),
			ClientCertFile: write("client.crt", client.CertPEM),
			ClientKeyFile:  write("client.key", client.KeyPEM),
		}
	})
	return streamWorld{srv: srv, agent: agent, ca: ca}
}

// dialStream opens a stream subresource of an instance through the apiserver.
func dialStream(t *testing.T, srv *framework.Server, variant, name, action string) (io.ReadWriteCloser, *http.Response, error) {
	t.Helper()
	return dialResourceStream(t, srv, variant, "virtualmachineinstances", name, action)
}

// dialResourceStream opens a stream subresource (action may go on: portforward/22/tcp).
func dialResourceStream(t *testing.T, srv *framework.Server, variant, resource, name, action string) (io.ReadWriteCloser, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	url := srv.Config.Host + actionPath(variant, resource, name, action)
	header := http.Header{
		"Authorization": []string{"Bearer user-secret"},
		"Cookie":        []string{"session=user-secret"},
		"X-Private":     []string{"user-secret"},
	}
	ws, resp, err := streams.Dial(ctx, url, &tls.Config{InsecureSkipVerify: true}, header) //nolint:gosec // test server
	if err != nil {
		return nil, resp, err
	}
	user, local := net.Pipe()
	go func() { _ = streams.Pipe(ctx, ws, local) }()
	return user, resp, nil
}

func TestVMIStreamsThroughNodeAgent(t *testing.T) {
	w := startStreamWorld(t, streams.APIServerCommonName)
	c := w.srv.Clientset(t)
	client := w.srv.HTTPClient(t)
	running := makeVMI(t, c, "running", kubevirtv1.Running, false)
	paused := makeVMI(t, c, "paused", kubevirtv1.Running, true)
	makeVMI(t, c, "scheduled", kubevirtv1.Scheduled, false)
	stale := makeVMI(t, c, "stale", kubevirtv1.Running, false) // the agent runs another uid
	makeVMI(t, c, "undefined", kubevirtv1.Running, false)      // the agent runs no domain
	w.agent.run(running.Name, running.UID)
	w.agent.run(paused.Name, paused.UID)
	w.agent.run(stale.Name, "an-older-uid")

	for _, variant := range pathVariants {
		t.Run(variant+"/console and vnc round-trip bytes", func(t *testing.T) {
			for _, action := range []string{"console", "vnc"} {
				conn, resp, err := dialStream(t, w.srv, variant, "running", action)
				if err != nil {
					t.Fatalf("%s: dial: %v (response %v)", action, err, resp)
				}
				want := []byte("RFB 003.008\n\x00\x01\xfe binary " + action)
				if _, err := conn.Write(want); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(want))
				if _, err := io.ReadFull(conn, got); err != nil {
					t.Fatalf("%s: read: %v", action, err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: echo %q, want %q", action, got, want)
				}
				_ = conn.Close()
			}
		})
		put := func(name, action, body string) response {
			return do(t, client, http.MethodPut, w.srv.Config.Host+actionPath(variant, "virtualmachineinstances", name, action), "application/json", []byte(body))
		}
		t.Run(variant+"/actions", func(t *testing.T) {
			cases := []struct {
				name, action, body string
				wantCode           int
				wantMsg            string
			}{
				{name: "running", action: "pause", wantCode: 200},
				{name: "running", action: "pause", body: `{"dryRun":["All"]}`, wantCode: 200},
				{name: "running", action: "softreboot", wantCode: 200},
				{name: "running", action: "freeze", body: `{"unfreezeTimeout":"5m"}`, wantCode: 200},
				{name: "running", action: "freeze", body: `{"unfreezeTimeout":"0s","dryRun":["All"]}`, wantCode: 200},
				{name: "running", action: "freeze", wantCode: 400, wantMsg: "unfreezeTimeout"},
				{name: "running", action: "freeze", body: `{"unfreezeTimeout":"-1m"}`, wantCode: 400, wantMsg: "must not be negative"},
				{name: "running", action: "freeze", body: `{"unfreezeTimeout":"soon"}`, wantCode: 400},
				{name: "running", action: "unfreeze", wantCode: 200},
				{name: "paused", action: "freeze", body: `{"unfreezeTimeout":"5m"}`, wantCode: 409, wantMsg: "VMI is paused"},
				{name: "scheduled", action: "unfreeze", wantCode: 409, wantMsg: "VMI is not running"},
				{name: "running", action: "unpause", wantCode: 409, wantMsg: "VMI is not paused"},
				{name: "paused", action: "unpause", body: "{}", wantCode: 200},
				{name: "paused", action: "pause", wantCode: 409, wantMsg: "VMI is already paused"},
				{name: "paused", action: "softreboot", wantCode: 409, wantMsg: "VMI is paused"},
				{name: "scheduled", action: "pause", wantCode: 409, wantMsg: "VMI is not running"},
				{name: "stale", action: "pause", wantCode: 409, wantMsg: "another VMI"},
				{name: "undefined", action: "pause", wantCode: 409, wantMsg: "runs no domain"},
				{name: "missing", action: "pause", wantCode: 404},
				{name: "running", action: "pause", body: "pause!", wantCode: 400},
				{name: "running", action: "pause", body: `{"dryRun":"All"}`, wantCode: 400},
				{name: "running", action: "pause", body: `{"dryRun":["Some"]}`, wantCode: 400},
			}
			for _, tc := range cases {
				resp := put(tc.name, tc.action, tc.body)
				if resp.code != tc.wantCode || !strings.Contains(resp.body, tc.wantMsg) {
					t.Errorf("%s %s %s: %d %s, want %d with %q", tc.action, tc.name, tc.body, resp.code, resp.body, tc.wantCode, tc.wantMsg)
				}
			}
		})
		t.Run(variant+"/console refused", func(t *testing.T) {
			if _, resp, err := dialStream(t, w.srv, variant, "scheduled", "console"); err == nil || resp == nil || resp.StatusCode != http.StatusConflict {
				t.Errorf("console of a scheduled VMI: err %v, response %v; want 409", err, resp)
			}
			url := w.srv.Config.Host + actionPath(variant, "virtualmachineinstances", "running", "console")
			if resp := do(t, client, http.MethodGet, url, "", nil); resp.code != http.StatusBadRequest {
				t.Errorf("console without upgrade: %d %s, want 400", resp.code, resp.body)
			}
		})
	}

	// Only what the agent must do reached it, with the right uid and never the caller's token.
	var pauses []string
	for _, r := range w.agent.seen() {
		if strings.HasPrefix(r, "PUT default/running/") {
			pauses = append(pauses, r)
		}
	}
	want := []string{}
	for range pathVariants {
		want = append(want, "PUT default/running/pause uid-ok", "PUT default/running/softreboot uid-ok",
			"PUT default/running/freeze?unfreezeTimeout=5m0s uid-ok", "PUT default/running/unfreeze uid-ok")
	}
	if diff := cmp.Diff(want, pauses); diff != "" {
		t.Errorf("actions at the agent (-want +got):\n%s", diff)
	}
	if len(w.agent.leaked) > 0 {
		t.Errorf("credentials reached the node agent: %v", w.agent.leaked)
	}

	t.Run("node without endpoint", func(t *testing.T) {
		for _, node := range []string{"node-2", "node-3"} {
			vmi := makeVMIOn(t, c, "on-"+node, node, kubevirtv1.Running, false)
			w.agent.run(vmi.Name, vmi.UID)
			resp := do(t, client, http.MethodPut, w.srv.Config.Host+actionPath("sub", "virtualmachineinstances", vmi.Name, "pause"), "", nil)
			if resp.code != http.StatusServiceUnavailable || !strings.Contains(resp.body, node) {
				t.Errorf("pause on %s: %d %s, want 503 naming the node", node, resp.code, resp.body)
			}
		}
	})
}

// TestVMIStreamsNeedClientCertificate: the node agent refuses an apiserver whose client
// certificate has another name, and callers without any certificate.
func TestVMIStreamsNeedClientCertificate(t *testing.T) {
	w := startStreamWorld(t, "someone-else")
	c := w.srv.Clientset(t)
	vmi := makeVMI(t, c, "running", kubevirtv1.Running, false)
	w.agent.run(vmi.Name, vmi.UID)
	resp := do(t, w.srv.HTTPClient(t), http.MethodPut, w.srv.Config.Host+actionPath("sub", "virtualmachineinstances", "running", "pause"), "", nil)
	if resp.code != http.StatusServiceUnavailable {
		t.Errorf("pause with a wrong client certificate: %d %s, want 503", resp.code, resp.body)
	}
	if _, r, err := dialStream(t, w.srv, "v1", "running", "console"); err == nil || r == nil || r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("console with a wrong client certificate: err %v, response %v; want 503", err, r)
	}
	// Directly, without a client certificate, the agent refuses the TLS handshake.
	pool := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // only the client side is under test
	direct := &http.Client{Transport: &http.Transport{TLSClientConfig: pool}}
	if r, err := direct.Get("https://" + w.agent.endpoint() + streams.Path("default", "running", streams.ActionConsole)); err == nil {
		_ = r.Body.Close()
		t.Errorf("agent answered %s to a caller without a client certificate", r.Status)
	}
	if got := w.agent.seen(); len(got) != 0 {
		t.Errorf("requests reached the agent: %v", got)
	}
}

// TestVMIStreamsWithoutNodeAgentConfig: without the node agent flags the actions explain the
// 503; dry runs and state checks still answer.
func TestVMIStreamsWithoutNodeAgentConfig(t *testing.T) {
	srv := framework.Start(t, "")
	c := srv.Clientset(t)
	client := srv.HTTPClient(t)
	makeVMI(t, c, "running", kubevirtv1.Running, false)
	makeVMI(t, c, "pending", kubevirtv1.Pending, false)
	put := func(name, body string) response {
		return do(t, client, http.MethodPut, srv.Config.Host+actionPath("sub", "virtualmachineinstances", name, "pause"), "", []byte(body))
	}
	if r := put("running", ""); r.code != http.StatusServiceUnavailable || !strings.Contains(r.body, "--node-agent-ca-file") {
		t.Errorf("pause: %d %s, want 503 naming the flags", r.code, r.body)
	}
	if r := put("running", `{"dryRun":["All"]}`); r.code != http.StatusOK {
		t.Errorf("dry-run pause: %d %s, want 200", r.code, r.body)
	}
	if r := put("pending", ""); r.code != http.StatusConflict {
		t.Errorf("pause of a pending VMI: %d %s, want 409", r.code, r.body)
	}
}
