package tunnel

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/node/streamserver"
	"github.com/nativevirt/nativevirt/pkg/streams"
	"github.com/nativevirt/nativevirt/pkg/streams/streamstest"
)

const migrationUID = types.UID("6f1c2b3a-0000-4000-8000-000000000001")

// targetAgent is a node agent that is the target of migrationUID: every
// channel leads to a unix socket of its "target pod", where a server answers
// "<channel>:" followed by what it read, until the client half-closes.
type targetAgent struct {
	podDir string
}

func (b *targetAgent) MigrationTunnel(_ context.Context, uid types.UID, ch streams.MigrationChannel) (net.Conn, error) {
	if uid != migrationUID {
		return nil, fmt.Errorf("not the target of %s: %w", uid, streamserver.ErrNotFound)
	}
	return net.Dial("unix", filepath.Join(b.podDir, ch.Socket()))
}

func serveTargetPod(t *testing.T, dir string) {
	t.Helper()
	for _, ch := range streams.MigrationChannels {
		l, err := net.Listen("unix", filepath.Join(dir, ch.Socket()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					got, _ := io.ReadAll(c)
					_, _ = fmt.Fprintf(c, "%s:%s", ch, got)
				}()
			}
		}()
	}
}

type pki struct {
	ca                *streamstest.CA
	source, apiserver *tls.Config
}

// startTarget runs the target agent's real stream server (mutual TLS).
func startTarget(t *testing.T) (string, pki) {
	t.Helper()
	ca, err := streamstest.NewCA("node CA")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.AgentCert(streams.HandlerCommonName, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srvCfg, err := streams.ServerTLSConfig(ca.CertPEM, serving.CertPEM, serving.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	podDir := t.TempDir()
	serveTargetPod(t, podDir)
	srv := httptest.NewUnstartedServer(streamserver.Handler(streamserver.Backend{Tunnels: &targetAgent{podDir: podDir}}))
	srv.TLS = srvCfg
	srv.StartTLS()
	t.Cleanup(srv.Close)

	client := func(pair streamstest.KeyPair) *tls.Config {
		cfg, err := streams.ClientTLSConfig(ca.CertPEM, pair.CertPEM, pair.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	sourceAgent, err := ca.AgentCert(streams.HandlerCommonName, "127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	apiserver, err := ca.ClientCert(streams.APIServerCommonName)
	if err != nil {
		t.Fatal(err)
	}
	return srv.Listener.Addr().String(), pki{ca: ca, source: client(sourceAgent), apiserver: client(apiserver)}
}

// longDir is a directory whose path is too long for a unix socket, like a
// kubelet emptyDir path.
func longDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pods", strings.Repeat("0123456789abcdef", 4), "volumes", "kubernetes.io~empty-dir", "private", "migration")
	if len(dir) < 110 {
		t.Fatalf("path %s is not long enough for the test", dir)
	}
	return dir
}

func listen(t *testing.T, endpoint string, cfg *tls.Config, uid types.UID) (*Proxy, string) {
	t.Helper()
	dir := longDir(t)
	p, err := Listen(t.Context(), dir, func(ctx context.Context, ch streams.MigrationChannel) (net.Conn, error) {
		return streams.DialTunnel(ctx, endpoint, cfg, streams.MigrationTarget{UID: uid, Channel: ch})
	}, klog.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, dir
}

// dialSource connects as the source libvirt or QEMU does: to the socket in
// the source pod's directory (through a short path, as inside the pod).
func dialSource(t *testing.T, p *Proxy, ch streams.MigrationChannel) *net.UnixConn {
	t.Helper()
	c, err := net.Dial("unix", p.dir.Path(ch.Socket()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return c.(*net.UnixConn)
}

func TestProxyTunnelsEveryChannel(t *testing.T) {
	endpoint, keys := startTarget(t)
	p, _ := listen(t, endpoint, keys.source, migrationUID)
	for _, ch := range streams.MigrationChannels {
		c := dialSource(t, p, ch)
		msg := "bytes of the " + string(ch) + " channel"
		if _, err := io.WriteString(c, msg); err != nil {
			t.Fatal(err)
		}
		if err := c.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("%s: %v", ch, err)
		}
		if want := string(ch) + ":" + msg; string(got) != want {
			t.Errorf("%s: the target pod answered %q, want %q", ch, got, want)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n, _, _ := p.Stats(); n == 3 {
			break
		}
		if time.Now().After(deadline) {
			n, _, _ := p.Stats()
			t.Fatalf("%d tunnels counted, want 3", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProxyCloseEndsTunnelsAndRemovesSockets(t *testing.T) {
	endpoint, keys := startTarget(t)
	p, dir := listen(t, endpoint, keys.source, migrationUID)
	c := dialSource(t, p, streams.ChannelQEMU)
	if _, err := io.WriteString(c, "half a migration"); err != nil {
		t.Fatal(err)
	}
	// Let the tunnel open before closing the proxy under it.
	deadline := time.Now().Add(10 * time.Second)
	for p.tunnels.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(c); err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("reading after Close: %v", err)
	}
	for _, ch := range streams.MigrationChannels {
		if _, err := os.Stat(filepath.Join(dir, ch.Socket())); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket %s left behind: %v", ch.Socket(), err)
		}
	}
}

// TestProxyRefusals: a tunnel the target refuses (not its migration, or the
// apiserver's certificate) closes the source's connection at once, and the
// source agent's certificate opens no console on the target.
func TestProxyRefusals(t *testing.T) {
	endpoint, keys := startTarget(t)
	for name, tc := range map[string]struct {
		cfg *tls.Config
		uid types.UID
	}{
		"unknown migration":                 {keys.source, "6f1c2b3a-0000-4000-8000-000000000002"},
		"apiserver certificate as a source": {keys.apiserver, migrationUID},
	} {
		t.Run(name, func(t *testing.T) {
			p, _ := listen(t, endpoint, tc.cfg, tc.uid)
			c := dialSource(t, p, streams.ChannelLibvirt)
			got, err := io.ReadAll(c)
			if len(got) != 0 {
				t.Errorf("the source read %q through a refused tunnel (err %v)", got, err)
			}
			if n, _, _ := p.Stats(); n != 0 {
				t.Errorf("%d tunnels opened, want none", n)
			}
		})
	}
	t.Run("node agent certificate opens no console", func(t *testing.T) {
		h := map[string][]string{streams.VMIUIDHeader: {"uid-1"}}
		_, resp, err := streams.Dial(context.Background(), streams.Target{Namespace: "default", Name: "vm", Action: streams.ActionConsole}.URL(endpoint), keys.source, h)
		if err == nil || resp == nil || resp.StatusCode != 403 {
			t.Errorf("console with a node agent certificate: %v (response %v), want 403", err, resp)
		}
		if resp != nil {
			_ = resp.Body.Close()
		}
	})
}
