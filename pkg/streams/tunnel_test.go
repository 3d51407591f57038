package streams_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nativevirt/nativevirt/pkg/streams"
)

// tunnelWorld is a node agent serving tunnels to a unix socket "in the target
// pod", and the TLS configuration of another agent dialing it.
type tunnelWorld struct {
	endpoint string
	client   *tls.Config
	target   net.Listener
}

func startTunnelServer(t *testing.T) tunnelWorld {
	t.Helper()
	p := newPKI(t)
	agent, err := p.ca.AgentCert(streams.HandlerCommonName, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	target, err := net.Listen("unix", filepath.Join(t.TempDir(), "qemu.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = target.Close() })
	srvCfg, err := streams.ServerTLSConfig(p.ca.CertPEM, p.server.CertPEM, p.server.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mt, err := streams.ParseMigrationPath(r.URL.Path)
		if err != nil || mt.UID != "mig-1" {
			http.Error(w, "no such migration", http.StatusNotFound)
			return
		}
		back, err := net.Dial("unix", target.Addr().String())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		conn, err := streams.AcceptTunnel(w, r)
		if err != nil {
			_ = back.Close()
			return
		}
		streams.Splice(conn, back)
	}))
	srv.TLS = srvCfg
	srv.StartTLS()
	t.Cleanup(srv.Close)
	client, err := streams.ClientTLSConfig(p.ca.CertPEM, agent.CertPEM, agent.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return tunnelWorld{endpoint: srv.Listener.Addr().String(), client: client, target: target}
}

// TestTunnelCarriesBytesBothWays: the target speaks first (as an NBD server
// does), then a megabyte goes each way, and each end of stream reaches the
// other side as a half-close.
func TestTunnelCarriesBytesBothWays(t *testing.T) {
	w := startTunnelServer(t)
	const greeting = "NBDMAGICIHAVEOPT"
	payload := make([]byte, 1<<20)
	if _, err := rand.Read(payload); err != nil {
		t.Fatal(err)
	}
	type result struct {
		got []byte
		err error
	}
	targetGot := make(chan result, 1)
	go func() {
		c, err := w.target.Accept()
		if err != nil {
			targetGot <- result{err: err}
			return
		}
		defer c.Close()
		if _, err := io.WriteString(c, greeting); err != nil {
			targetGot <- result{err: err}
			return
		}
		got, err := io.ReadAll(c) // until the source's half-close
		if err == nil {
			_, err = c.Write(payload) // the reply travels after the half-close
		}
		targetGot <- result{got: got, err: err}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := streams.DialTunnel(ctx, w.endpoint, w.client, streams.MigrationTarget{UID: "mig-1", Channel: streams.ChannelQEMU})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	hello := make([]byte, len(greeting))
	if _, err := io.ReadFull(conn, hello); err != nil || string(hello) != greeting {
		t.Fatalf("greeting %q, %v; want %q", hello, err, greeting)
	}
	if _, err := conn.Write(payload); err != nil {
		t.Fatal(err)
	}
	if err := conn.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	back, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	r := <-targetGot
	if r.err != nil {
		t.Fatalf("target side: %v", r.err)
	}
	if sha256.Sum256(r.got) != sha256.Sum256(payload) {
		t.Errorf("target received %d bytes, not the %d sent", len(r.got), len(payload))
	}
	if !bytes.Equal(back, payload) {
		t.Errorf("source received %d bytes back, not the %d sent", len(back), len(payload))
	}
}

func TestTunnelRefusal(t *testing.T) {
	w := startTunnelServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := streams.DialTunnel(ctx, w.endpoint, w.client, streams.MigrationTarget{UID: "mig-2", Channel: streams.ChannelNBD})
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "no such migration") {
		t.Errorf("dial of an unknown migration: %v, want a 404 refusal with the agent's message", err)
	}
}
