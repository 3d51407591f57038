package streamserver

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/console"
	"github.com/nativevirt/nativevirt/pkg/streams"
	"github.com/nativevirt/nativevirt/pkg/streams/streamstest"
)

const vmiUID = types.UID("uid-1")

// backend runs one VMI "default/vm" whose console is a hub over a pipe.
type backend struct {
	mu    sync.Mutex
	calls []string
	// unfreezeTimeout is the last freeze's.
	unfreezeTimeout time.Duration
	hub             *console.Hub
	guest           chan net.Conn
}

func newBackend() *backend {
	b := &backend{guest: make(chan net.Conn, 4)}
	b.hub = console.NewHub(func() (io.ReadWriteCloser, error) {
		a, g := net.Pipe()
		b.guest <- g
		return a, nil
	})
	return b
}

func (b *backend) check(action, ns, name string, uid types.UID) error {
	b.mu.Lock()
	b.calls = append(b.calls, action)
	b.mu.Unlock()
	if ns == "default" && name == "reattaching" {
		return fmt.Errorf("not re-attached to %s/%s yet: %w", ns, name, ErrUnavailable)
	}
	if ns != "default" || name != "vm" {
		return fmt.Errorf("no domain for %s/%s: %w", ns, name, ErrNotFound)
	}
	if uid != vmiUID {
		return fmt.Errorf("uid %s is not %s: %w", uid, vmiUID, ErrConflict)
	}
	return nil
}

func (b *backend) Pause(_ context.Context, ns, name string, uid types.UID) error {
	return b.check("pause", ns, name, uid)
}
func (b *backend) Unpause(_ context.Context, ns, name string, uid types.UID) error {
	if err := b.check("unpause", ns, name, uid); err != nil {
		return err
	}
	return fmt.Errorf("VMI is not paused: %w", ErrConflict)
}
func (b *backend) SoftReboot(_ context.Context, ns, name string, uid types.UID) error {
	return b.check("softreboot", ns, name, uid)
}
func (b *backend) Freeze(_ context.Context, ns, name string, uid types.UID, unfreezeTimeout time.Duration) error {
	b.mu.Lock()
	b.unfreezeTimeout = unfreezeTimeout
	b.mu.Unlock()
	return b.check("freeze", ns, name, uid)
}
func (b *backend) Unfreeze(_ context.Context, ns, name string, uid types.UID) error {
	return b.check("unfreeze", ns, name, uid)
}
func (b *backend) Console(_ context.Context, ns, name string, uid types.UID) (io.ReadWriteCloser, error) {
	if err := b.check("console", ns, name, uid); err != nil {
		return nil, err
	}
	return b.hub.Attach()
}
func (b *backend) VNC(_ context.Context, ns, name string, uid types.UID) (net.Conn, error) {
	if err := b.check("vnc", ns, name, uid); err != nil {
		return nil, err
	}
	a, g := net.Pipe()
	go func() { _, _ = g.Write([]byte("RFB 003.008\n")); _, _ = io.Copy(io.Discard, g) }()
	return a, nil
}

// PortForward connects to a guest that answers each write with the port and what it read.
func (b *backend) PortForward(_ context.Context, ns, name string, uid types.UID, port streams.ForwardedPort) (net.Conn, error) {
	if err := b.check("portforward", ns, name, uid); err != nil {
		return nil, err
	}
	a, g := net.Pipe()
	go func() {
		defer g.Close()
		buf := make([]byte, 64)
		for {
			n, err := g.Read(buf)
			if err != nil {
				return
			}
			fmt.Fprintf(g, "%d/%s:%s", port.Port, port.Protocol, buf[:n])
		}
	}()
	return a, nil
}

// Screenshot is a few bytes standing in for a PNG.
func (b *backend) Screenshot(_ context.Context, ns, name string, uid types.UID) ([]byte, error) {
	if err := b.check("screenshot", ns, name, uid); err != nil {
		return nil, err
	}
	return []byte("\x89PNG fake"), nil
}

// GuestAgentInfo reports a guest with one user and one file system.
func (b *backend) GuestAgentInfo(_ context.Context, ns, name string, uid types.UID) (*kubevirtv1.VirtualMachineInstanceGuestAgentInfo, error) {
	if err := b.check("guestosinfo", ns, name, uid); err != nil {
		return nil, err
	}
	return &kubevirtv1.VirtualMachineInstanceGuestAgentInfo{
		Hostname: "vm",
		UserList: []kubevirtv1.VirtualMachineInstanceGuestOSUser{{UserName: "root", LoginTime: 1.5}},
		FSInfo: kubevirtv1.VirtualMachineInstanceFileSystemInfo{Filesystems: []kubevirtv1.VirtualMachineInstanceFileSystem{
			{DiskName: "vda1", MountPoint: "/", FileSystemType: "ext4", UsedBytes: 1, TotalBytes: 2}}},
	}, nil
}

// MigrationTunnel knows one migration, "mig-1", whose target echoes.
func (b *backend) MigrationTunnel(_ context.Context, uid types.UID, ch streams.MigrationChannel) (net.Conn, error) {
	b.mu.Lock()
	b.calls = append(b.calls, "tunnel "+string(ch))
	b.mu.Unlock()
	if uid != "mig-1" {
		return nil, fmt.Errorf("not the target of migration %s: %w", uid, ErrNotFound)
	}
	a, g := net.Pipe()
	go func() {
		defer g.Close()
		_, _ = io.Copy(g, g)
	}()
	return a, nil
}

type world struct {
	srv    *httptest.Server
	ca     *streamstest.CA
	client *tls.Config
}

func start(t *testing.T, b *backend) world {
	t.Helper()
	ca, err := streamstest.NewCA("node CA")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.ServerCert("nativevirt-handler", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := streams.ServerTLSConfig(ca.CertPEM, serving.CertPEM, serving.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(Handler(Backend{Commands: b, Streams: b, GuestQueries: b, Tunnels: b}))
	srv.TLS = cfg
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return world{srv: srv, ca: ca, client: clientConfig(t, ca, streams.APIServerCommonName)}
}

func clientConfig(t *testing.T, ca *streamstest.CA, cn string) *tls.Config {
	t.Helper()
	pair, err := ca.ClientCert(cn)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := streams.ClientTLSConfig(ca.CertPEM, pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func (w world) endpoint() string { return w.srv.Listener.Addr().String() }

func (w world) put(t *testing.T, cfg *tls.Config, ns, name string, a streams.Action, uid types.UID) (int, error) {
	t.Helper()
	return w.putQuery(t, cfg, ns, name, a, uid, "")
}

// putQuery is put with a query string.
func (w world) putQuery(t *testing.T, cfg *tls.Config, ns, name string, a streams.Action, uid types.UID, query string) (int, error) {
	t.Helper()
	u := streams.Target{Namespace: ns, Name: name, Action: a}.URL(w.endpoint())
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequest(http.MethodPut, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(streams.VMIUIDHeader, string(uid))
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestCommands(t *testing.T) {
	b := newBackend()
	w := start(t, b)
	tests := []struct {
		name   string
		ns, vm string
		action streams.Action
		uid    types.UID
		want   int
	}{
		{"pause", "default", "vm", streams.ActionPause, vmiUID, http.StatusOK},
		{"softreboot", "default", "vm", streams.ActionSoftReboot, vmiUID, http.StatusOK},
		{"unpause of a running VMI", "default", "vm", streams.ActionUnpause, vmiUID, http.StatusConflict},
		{"uid mismatch", "default", "vm", streams.ActionPause, "other", http.StatusConflict},
		{"unknown VMI", "default", "nope", streams.ActionPause, vmiUID, http.StatusNotFound},
		{"domain not re-attached yet", "default", "reattaching", streams.ActionPause, vmiUID, http.StatusServiceUnavailable},
		{"missing uid", "default", "vm", streams.ActionPause, "", http.StatusBadRequest},
		{"console needs GET", "default", "vm", streams.ActionConsole, vmiUID, http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.put(t, w.client, tt.ns, tt.vm, tt.action, tt.uid)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("status = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestFreeze: a freeze carries its unfreeze timeout to the backend; without one, or with a
// negative one, it is refused.
func TestFreeze(t *testing.T) {
	b := newBackend()
	w := start(t, b)
	for _, tt := range []struct {
		action streams.Action
		query  string
		want   int
	}{
		{streams.ActionFreeze, "unfreezeTimeout=1m30s", http.StatusOK},
		{streams.ActionFreeze, "", http.StatusBadRequest},
		{streams.ActionFreeze, "unfreezeTimeout=-1s", http.StatusBadRequest},
		{streams.ActionFreeze, "unfreezeTimeout=soon", http.StatusBadRequest},
		{streams.ActionUnfreeze, "", http.StatusOK},
	} {
		got, err := w.putQuery(t, w.client, "default", "vm", tt.action, vmiUID, tt.query)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("%s?%s: status %d, want %d", tt.action, tt.query, got, tt.want)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if want := []string{"freeze", "unfreeze"}; !slices.Equal(b.calls, want) {
		t.Errorf("backend calls %v, want %v: a refused freeze must not reach it", b.calls, want)
	}
	if b.unfreezeTimeout != 90*time.Second {
		t.Errorf("the backend's unfreeze timeout is %s, want 1m30s", b.unfreezeTimeout)
	}
}

func TestMutualTLS(t *testing.T) {
	b := newBackend()
	w := start(t, b)
	other, err := streamstest.NewCA("other CA")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		cfg    *tls.Config
		wantOK bool
	}{
		{"apiserver certificate", w.client, true},
		{"wrong common name", clientConfig(t, w.ca, "system:node:evil"), false},
		{"certificate from another CA", withRoots(clientConfig(t, other, streams.APIServerCommonName), w.client), false},
		{"no certificate", &tls.Config{InsecureSkipVerify: true}, false}, //nolint:gosec // the server must refuse it
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.mu.Lock()
			b.calls = nil
			b.mu.Unlock()
			code, err := w.put(t, tt.cfg, "default", "vm", streams.ActionPause, vmiUID)
			ok := err == nil && code == http.StatusOK
			if ok != tt.wantOK {
				t.Errorf("accepted = %v (code %d, err %v), want %v", ok, code, err, tt.wantOK)
			}
			b.mu.Lock()
			reached := len(b.calls) > 0
			b.mu.Unlock()
			if reached != tt.wantOK {
				t.Errorf("backend reached = %v, want %v", reached, tt.wantOK)
			}
		})
	}
}

// withRoots keeps cfg's client certificate but trusts the server like good does.
func withRoots(cfg, good *tls.Config) *tls.Config {
	c := good.Clone()
	c.Certificates = cfg.Certificates
	return c
}

func dial(t *testing.T, w world, a streams.Action) *websocket.Conn {
	t.Helper()
	return dialTarget(t, w, streams.Target{Namespace: "default", Name: "vm", Action: a})
}

func dialTarget(t *testing.T, w world, target streams.Target) *websocket.Conn {
	t.Helper()
	h := http.Header{}
	h.Set(streams.VMIUIDHeader, string(vmiUID))
	ws, resp, err := streams.Dial(context.Background(), target.URL(w.endpoint()), w.client, h)
	if err != nil {
		t.Fatalf("dial %s: %v (response %v)", target.Path(), err, resp)
	}
	if got := ws.Subprotocol(); got != streams.Subprotocol {
		t.Errorf("subprotocol = %q, want %q", got, streams.Subprotocol)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func readFrame(t *testing.T, ws *websocket.Conn) string {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	kind, data, err := ws.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if kind != websocket.BinaryMessage {
		t.Errorf("frame type %d, want binary", kind)
	}
	return string(data)
}

func TestConsoleSharedBySessions(t *testing.T) {
	b := newBackend()
	w := start(t, b)
	s1 := dial(t, w, streams.ActionConsole)
	guest := <-b.guest
	s2 := dial(t, w, streams.ActionConsole)
	// Wait until both sessions are attached before the guest talks.
	deadline := time.Now().Add(5 * time.Second)
	for b.hub.Sessions() != 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	go func() { _, _ = guest.Write([]byte("NativeVirt demo guest ready\r\n")) }()
	got := []string{readFrame(t, s1), readFrame(t, s2)}
	want := []string{"NativeVirt demo guest ready\r\n", "NativeVirt demo guest ready\r\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sessions saw (-want +got):\n%s", diff)
	}
	if err := s2.WriteMessage(websocket.BinaryMessage, []byte("echo hi\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("echo hi\n"))
	_ = guest.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(guest, buf); err != nil || string(buf) != "echo hi\n" {
		t.Errorf("guest got %q, %v", buf, err)
	}
	select {
	case <-b.guest:
		t.Error("the console was opened a second time")
	default:
	}
}

func TestVNC(t *testing.T) {
	w := start(t, newBackend())
	ws := dial(t, w, streams.ActionVNC)
	if got := readFrame(t, ws); got != "RFB 003.008\n" {
		t.Errorf("VNC banner = %q", got)
	}
}

// A port forward reaches the port and protocol its path names, and carries bytes both ways.
func TestPortForward(t *testing.T) {
	w := start(t, newBackend())
	for _, port := range []streams.ForwardedPort{{Port: 8080, Protocol: "tcp"}, {Port: 53, Protocol: "udp"}} {
		ws := dialTarget(t, w, streams.Target{Namespace: "default", Name: "vm", Action: streams.ActionPortForward, Forward: port})
		if err := ws.WriteMessage(websocket.BinaryMessage, []byte("hello")); err != nil {
			t.Fatal(err)
		}
		if got, want := readFrame(t, ws), fmt.Sprintf("%d/%s:hello", port.Port, port.Protocol); got != want {
			t.Errorf("the guest answered %q, want %q", got, want)
		}
	}
}

// A VMI request that fails is answered with a Status naming the reason, for commands and for
// streams alike (virtctl shows a Status's message, of a plain text answer only the code).
func TestVMIFailuresAreStatuses(t *testing.T) {
	w := start(t, newBackend())
	for _, tc := range []struct {
		method string
		target streams.Target
		uid    types.UID
		code   int32
		reason metav1.StatusReason
		msg    string
	}{
		{http.MethodPut, streams.Target{Namespace: "default", Name: "vm", Action: streams.ActionPause}, "other",
			http.StatusConflict, metav1.StatusReasonConflict, "uid other is not uid-1"},
		{http.MethodGet, streams.Target{Namespace: "default", Name: "nope", Action: streams.ActionConsole}, vmiUID,
			http.StatusNotFound, metav1.StatusReasonNotFound, "no domain for default/nope"},
		{http.MethodGet, streams.Target{Namespace: "default", Name: "reattaching", Action: streams.ActionPortForward,
			Forward: streams.ForwardedPort{Port: 22, Protocol: "tcp"}}, vmiUID,
			http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "not re-attached to default/reattaching yet"},
	} {
		resp, body := w.request(t, tc.method, tc.target, tc.uid)
		var st metav1.Status
		err := json.Unmarshal(body, &st)
		if err != nil || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %v, Content-Type %q; want a JSON Status", tc.target.Path(), err, resp.Header.Get("Content-Type"))
		}
		want := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Message: tc.msg, Reason: tc.reason, Code: tc.code}
		if diff := cmp.Diff(want, st); diff != "" || resp.StatusCode != int(tc.code) {
			t.Errorf("%s: HTTP %d (-want +got):\n%s", tc.target.Path(), resp.StatusCode, diff)
		}
	}
}

// The guest agent actions answer KubeVirt's kinds: the whole information, the users, the file
// systems.
func TestGuestAgentActions(t *testing.T) {
	w := start(t, newBackend())
	for _, tc := range []struct {
		action streams.Action
		want   string
	}{
		{streams.ActionGuestOSInfo, `{"kind":"VirtualMachineInstanceGuestAgentInfo","apiVersion":"subresources.kubevirt.io/v1","hostname":"vm","os":{},"userList":[{"userName":"root","loginTime":1.5}],"fsInfo":{"disks":[{"diskName":"vda1","mountPoint":"/","fileSystemType":"ext4","usedBytes":1,"totalBytes":2}]}}`},
		{streams.ActionUserList, `{"kind":"VirtualMachineInstanceGuestOSUserList","apiVersion":"subresources.kubevirt.io/v1","metadata":{},"items":[{"userName":"root","loginTime":1.5}]}`},
		{streams.ActionFileSystemList, `{"kind":"VirtualMachineInstanceFileSystemList","apiVersion":"subresources.kubevirt.io/v1","metadata":{},"items":[{"diskName":"vda1","mountPoint":"/","fileSystemType":"ext4","usedBytes":1,"totalBytes":2}]}`},
	} {
		resp, body := w.request(t, http.MethodGet, streams.Target{Namespace: "default", Name: "vm", Action: tc.action}, vmiUID)
		if resp.StatusCode != http.StatusOK || string(body) != tc.want || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s\nwant 200 %s", tc.action, resp.StatusCode, body, tc.want)
		}
	}
}

func TestScreenshotIsPNG(t *testing.T) {
	w := start(t, newBackend())
	resp, body := w.request(t, http.MethodGet, streams.Target{Namespace: "default", Name: "vm", Action: streams.ActionScreenshot}, vmiUID)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" || string(body) != "\x89PNG fake" {
		t.Errorf("screenshot: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// request makes a request of target as the apiserver, for uid, and reads the answer.
func (w world) request(t *testing.T, method string, target streams.Target, uid types.UID) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, target.URL(w.endpoint()), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(streams.VMIUIDHeader, string(uid))
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: w.client}, Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}
