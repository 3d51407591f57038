package streamserver

import (
	"context"
	"crypto/tls"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nativevirt/nativevirt/pkg/streams"
)

// agentClient is another node agent's TLS configuration: its own
// certificate (server and client use) from the node CA.
func agentClient(t *testing.T, w world) *tls.Config {
	t.Helper()
	pair, err := w.ca.AgentCert(streams.HandlerCommonName, "127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := streams.ClientTLSConfig(w.ca.CertPEM, pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func dialTunnel(w world, cfg *tls.Config, uid types.UID) (io.ReadWriteCloser, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return streams.DialTunnel(ctx, w.endpoint(), cfg, streams.MigrationTarget{UID: uid, Channel: streams.ChannelQEMU})
}

func TestMigrationTunnel(t *testing.T) {
	b := newBackend()
	w := start(t, b)
	conn, err := dialTunnel(w, agentClient(t, w), "mig-1")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "migration stream"); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len("migration stream"))
	if _, err := io.ReadFull(conn, got); err != nil || string(got) != "migration stream" {
		t.Errorf("echo %q, %v", got, err)
	}

	if _, err := dialTunnel(w, agentClient(t, w), "mig-2"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("tunnel for a migration this node is not the target of: %v, want 404", err)
	}
}

// TestRolesAreSeparate: the apiserver's certificate opens no migration
// tunnel, and a node agent's certificate opens no console, VNC or command.
func TestRolesAreSeparate(t *testing.T) {
	b := newBackend()
	w := start(t, b)
	agent := agentClient(t, w)

	if _, err := dialTunnel(w, w.client, "mig-1"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("apiserver certificate opening a migration tunnel: %v, want 403", err)
	}
	code, err := w.put(t, agent, "default", "vm", streams.ActionPause, vmiUID)
	if err != nil || code != 403 {
		t.Errorf("node agent certificate pausing a VMI: code %d, %v; want 403", code, err)
	}
	h := map[string][]string{streams.VMIUIDHeader: {string(vmiUID)}}
	for _, a := range []streams.Action{streams.ActionConsole, streams.ActionVNC} {
		_, resp, err := streams.Dial(context.Background(), streams.Target{Namespace: "default", Name: "vm", Action: a}.URL(w.endpoint()), agent, h)
		if err == nil || resp == nil || resp.StatusCode != 403 {
			t.Errorf("node agent certificate opening %s: %v (response %v), want 403", a, err, resp)
		}
		if resp != nil {
			_ = resp.Body.Close()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.calls) != 0 {
		t.Errorf("the backend was reached: %v", b.calls)
	}
}
