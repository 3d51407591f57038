// Package framework runs a real nativevirt-apiserver in-process for integration tests: secure
// serving on 127.0.0.1 with a random port, a real embedded etcd in a test directory, standalone
// mode (no kube-apiserver to delegate authentication to).
package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc/grpclog"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/nativevirt/nativevirt/pkg/apiserver/app"
	clientset "github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
)

func init() {
	// Storage clients of a stopped server keep redialling its etcd for a while; in a test binary
	// that starts many servers that is only noise.
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
}

// Server is one running nativevirt-apiserver.
type Server struct {
	// Config reaches the server as an administrator.
	Config *rest.Config
	// DataDir holds the embedded etcd; start another Server on it to test restarts.
	DataDir string

	cancel context.CancelFunc
	done   chan error
}

// Start runs a server on dataDir (a fresh one when empty) and waits until /readyz is ok. The
// server is stopped when the test ends unless Stop is called first.
func Start(t testing.TB, dataDir string) *Server {
	t.Helper()
	return StartWithOptions(t, dataDir, nil)
}

// StartWithOptions is Start with a hook that adjusts the options before the server is built
// (e.g. a fake Kubernetes client or node agent certificates).
func StartWithOptions(t testing.TB, dataDir string, customize func(*app.Options)) *Server {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	o := app.NewOptions()
	o.Standalone = true
	o.DataDir = dataDir
	o.Recommended.SecureServing.Listener = l
	o.Recommended.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	o.Recommended.SecureServing.BindPort = l.Addr().(*net.TCPAddr).Port
	o.Recommended.SecureServing.ServerCert.CertDirectory = t.TempDir()
	if customize != nil {
		customize(o)
	}

	ctx, cancel := context.WithCancel(context.Background())
	srv, err := app.NewServer(ctx, o)
	if err != nil {
		cancel()
		_ = l.Close()
		t.Fatalf("new server: %v", err)
	}
	s := &Server{
		Config: &rest.Config{
			Host:            "https://" + l.Addr().String(),
			TLSClientConfig: rest.TLSClientConfig{Insecure: true},
			QPS:             1000,
			Burst:           1000,
		},
		DataDir: dataDir,
		cancel:  cancel,
		done:    make(chan error, 1),
	}
	go func() {
		err := srv.GenericAPIServer.PrepareRun().RunWithContext(ctx)
		o.Stop()
		s.done <- err
	}()
	t.Cleanup(s.Stop)
	if err := s.waitReady(60 * time.Second); err != nil {
		t.Fatalf("server not ready: %v", err)
	}
	return s
}

// Stop shuts the server and its embedded etcd down and waits for both; safe to call twice.
func (s *Server) Stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	<-s.done
}

func (s *Server) waitReady(timeout time.Duration) error {
	client, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		resp, err := client.Get(s.Config.Host + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/readyz: %s", resp.Status)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return errors.Join(fmt.Errorf("timed out after %s", timeout), last)
}

// Clientset returns the generated typed client.
func (s *Server) Clientset(t testing.TB) *clientset.Clientset {
	t.Helper()
	c, err := clientset.NewForConfig(s.Config)
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return c
}

// Dynamic returns client-go's dynamic client.
func (s *Server) Dynamic(t testing.TB) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		t.Fatalf("dynamic client: %v", err)
	}
	return c
}

// HTTPClient returns a raw HTTP client that trusts the test server.
func (s *Server) HTTPClient(t testing.TB) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		t.Fatalf("http client: %v", err)
	}
	return c
}
