package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/nativevirt/nativevirt/pkg/metricsserver"
	nodemetrics "github.com/nativevirt/nativevirt/pkg/node/metrics"
	"github.com/nativevirt/nativevirt/pkg/node/streamserver"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// tlsFiles are the node CA and the agent's certificate and key, PEM.
type tlsFiles struct {
	ca, cert, key []byte
}

// readTLSFiles reads the files of --client-ca-file, --tls-cert-file and --tls-private-key-file.
func readTLSFiles(o *Options) (*tlsFiles, error) {
	var f tlsFiles
	var err error
	if f.ca, err = os.ReadFile(o.ClientCAFile); err != nil {
		return nil, fmt.Errorf("--client-ca-file: %w", err)
	}
	if f.cert, err = os.ReadFile(o.TLSCertFile); err != nil {
		return nil, fmt.Errorf("--tls-cert-file: %w", err)
	}
	if f.key, err = os.ReadFile(o.TLSKeyFile); err != nil {
		return nil, fmt.Errorf("--tls-private-key-file: %w", err)
	}
	return &f, nil
}

// clientUsage reports whether the agent's certificate may authenticate a
// client (needed to open migration tunnels to other agents).
func (f *tlsFiles) clientUsage() bool {
	block, _ := pem.Decode(f.cert)
	if block == nil {
		return false
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return false
	}
	for _, u := range c.ExtKeyUsage {
		if u == x509.ExtKeyUsageClientAuth || u == x509.ExtKeyUsageAny {
			return true
		}
	}
	return false
}

// tunnelDialer opens migration tunnels to other node agents with this
// agent's certificate.
func tunnelDialer(f *tlsFiles) (func(context.Context, string, streams.MigrationTarget) (net.Conn, error), error) {
	cfg, err := streams.ClientTLSConfig(f.ca, f.cert, f.key)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, endpoint string, t streams.MigrationTarget) (net.Conn, error) {
		return streams.DialTunnel(ctx, endpoint, cfg, t)
	}, nil
}

// streamServer builds the mTLS stream server.
func streamServer(addr string, f *tlsFiles, b streamserver.Backend) (*http.Server, error) {
	tlsConfig, err := streams.ServerTLSConfig(f.ca, f.cert, f.key)
	if err != nil {
		return nil, err
	}
	return &http.Server{
		Addr:              addr,
		Handler:           streamserver.Handler(b),
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 30 * time.Second,
	}, nil
}

// metricsServer serves the VMIs' metrics with the agent's certificate to the callers that the
// cluster authenticates and allows to get /metrics (package metricsserver).
func metricsServer(addr string, f *tlsFiles, kube kubernetes.Interface, c *nodemetrics.Collector) (*http.Server, error) {
	cert, err := tls.X509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, fmt.Errorf("the metrics server's certificate: %w", err)
	}
	return metricsserver.Server(addr, cert, kube, c)
}

// serveTLS runs srv (its TLSConfig holds the certificate) until ctx ends; a failure goes to errs
// as what's.
func serveTLS(ctx context.Context, srv *http.Server, what string, errs chan<- error) {
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.ListenAndServeTLS("", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("%s: %w", what, err)
		}
	}()
}
