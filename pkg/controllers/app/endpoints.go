package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"

	ctrlmetrics "github.com/nativevirt/nativevirt/pkg/controllers/metrics"
	"github.com/nativevirt/nativevirt/pkg/metricsserver"
)

// metricsServer serves the collector on addr over HTTPS with a self-signed certificate (as
// kube-controller-manager does without --tls-cert-file).
func metricsServer(addr string, kube kubernetes.Interface, c *ctrlmetrics.Collector) (*http.Server, error) {
	host, err := os.Hostname()
	if err != nil {
		host = "nativevirt-controller"
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, nil, []string{"nativevirt-controller"})
	if err != nil {
		return nil, fmt.Errorf("the metrics endpoint's self-signed certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return metricsserver.Server(addr, cert, kube, c)
}

// serveMetrics serves srv (nil: nothing) until ctx ends; it returns a function that stops it.
func serveMetrics(ctx context.Context, srv *http.Server) func() {
	if srv == nil {
		return func() {}
	}
	srv.BaseContext = func(net.Listener) context.Context { return ctx }
	go func() {
		klog.FromContext(ctx).Info("Metrics served", "address", srv.Addr, "path", metricsserver.Path)
		if err := srv.ListenAndServeTLS("", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "Metrics endpoint failed", "addr", srv.Addr)
		}
	}()
	return func() { _ = srv.Close() }
}

// serveHealth serves /healthz (failing when a leader stopped renewing its lease) and /readyz on
// addr until ctx ends; it returns a function that stops it.
func serveHealth(ctx context.Context, addr string, watchdog *leaderelection.HealthzAdaptor) func() {
	if addr == "" {
		return func() {}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if watchdog != nil {
			if err := watchdog.Check(r); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "Health endpoint failed", "addr", addr)
		}
	}()
	return func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			klog.FromContext(ctx).Error(fmt.Errorf("stopping the health endpoint: %w", err), "")
		}
	}
}
