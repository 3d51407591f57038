package streams_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/nativevirt/nativevirt/pkg/streams"
	"github.com/nativevirt/nativevirt/pkg/streams/streamstest"
)

// pki is one test world: a node CA, an agent serving pair and an apiserver client pair.
type pki struct {
	ca     *streamstest.CA
	server streamstest.KeyPair
	client streamstest.KeyPair
}

func newPKI(t *testing.T) pki {
	t.Helper()
	ca, err := streamstest.NewCA("nativevirt node CA")
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.ServerCert("nativevirt-handler", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.ClientCert(streams.APIServerCommonName)
	if err != nil {
		t.Fatal(err)
	}
	return pki{ca: ca, server: server, client: client}
}

func startAgent(t *testing.T, p pki) *httptest.Server {
	t.Helper()
	cfg, err := streams.ServerTLSConfig(p.ca.CertPEM, p.server.CertPEM, p.server.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	srv.TLS = cfg
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestTLSConfigs(t *testing.T) {
	world := newPKI(t)
	other := newPKI(t)
	wrongCN, err := world.ca.ClientCert("system:node:evil")
	if err != nil {
		t.Fatal(err)
	}
	// A node agent's certificate passes the TLS layer (the stream server
	// then limits it to migration tunnels) only when it allows client use.
	agentAsClient, err := world.ca.AgentCert(streams.HandlerCommonName, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	agentServerOnly, err := world.ca.ServerCert(streams.HandlerCommonName, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	// A serving certificate with the apiserver's name must not pass as a node agent.
	impostor, err := world.ca.ServerCert(streams.APIServerCommonName, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		serverPKI  pki
		clientCA   []byte
		clientPair streamstest.KeyPair
		noCert     bool
		wantOK     bool
	}{
		{name: "apiserver client accepted", serverPKI: world, clientCA: world.ca.CertPEM, clientPair: world.client, wantOK: true},
		{name: "client with another CN refused", serverPKI: world, clientCA: world.ca.CertPEM, clientPair: wrongCN},
		{name: "agent certificate as client accepted", serverPKI: world, clientCA: world.ca.CertPEM, clientPair: agentAsClient, wantOK: true},
		{name: "agent serving-only certificate as client refused", serverPKI: world, clientCA: world.ca.CertPEM, clientPair: agentServerOnly},
		{name: "client from another CA refused", serverPKI: world, clientCA: world.ca.CertPEM, clientPair: other.client},
		{name: "no client certificate refused", serverPKI: world, clientCA: world.ca.CertPEM, clientPair: world.client, noCert: true},
		{name: "agent from another CA refused by client", serverPKI: pki{ca: world.ca, server: other.server}, clientCA: world.ca.CertPEM, clientPair: world.client},
		{name: "agent with apiserver CN refused by client", serverPKI: pki{ca: world.ca, server: impostor}, clientCA: world.ca.CertPEM, clientPair: world.client},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startAgent(t, tt.serverPKI)
			cfg, err := streams.ClientTLSConfig(tt.clientCA, tt.clientPair.CertPEM, tt.clientPair.KeyPEM)
			if err != nil {
				t.Fatal(err)
			}
			if tt.noCert {
				cfg.Certificates = nil
			}
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
			resp, err := c.Get(srv.URL)
			if err == nil {
				_ = resp.Body.Close()
			}
			if gotOK := err == nil && resp.StatusCode == http.StatusOK; gotOK != tt.wantOK {
				t.Errorf("request succeeded = %v (err %v), want %v", gotOK, err, tt.wantOK)
			}
		})
	}
}

func TestTLSConfigBadInput(t *testing.T) {
	world := newPKI(t)
	tests := []struct {
		name          string
		ca, cert, key []byte
		build         func(ca, cert, key []byte) (*tls.Config, error)
	}{
		{name: "server without CA", cert: world.server.CertPEM, key: world.server.KeyPEM, build: streams.ServerTLSConfig},
		{name: "server with mismatched key", ca: world.ca.CertPEM, cert: world.server.CertPEM, key: world.client.KeyPEM, build: streams.ServerTLSConfig},
		{name: "client without CA", cert: world.client.CertPEM, key: world.client.KeyPEM, build: streams.ClientTLSConfig},
		{name: "client with garbage cert", ca: world.ca.CertPEM, cert: []byte("x"), key: world.client.KeyPEM, build: streams.ClientTLSConfig},
	}
	for _, tt := range tests {
		if _, err := tt.build(tt.ca, tt.cert, tt.key); err == nil {
			t.Errorf("%s: want an error", tt.name)
		}
	}
}
