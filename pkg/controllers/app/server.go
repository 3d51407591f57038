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

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/pkg/cmdutil"
	ctrlmetrics "github.com/nativevirt/nativevirt/pkg/controllers/metrics"
	"github.com/nativevirt/nativevirt/pkg/metricsserver"
)

// NewCommand is the nativevirt-controller command; it runs until ctx ends.
func NewCommand(ctx context.Context) *cobra.Command {
	o := NewOptions()
	return cmdutil.NewCommand(ctx, cmdutil.Daemon{
		Use:      "nativevirt-controller",
		Short:    "NativeVirt controllers: VM → VMI → launcher pod, replica sets, live migrations, node heartbeats",
		AddFlags: o.AddFlags,
		Validate: o.Validate,
		Run:      func(ctx context.Context) error { return Run(ctx, o) },
	})
}

// Run runs the controllers until ctx ends, under leader election when enabled.
func Run(ctx context.Context, o *Options) error {
	logger := klog.FromContext(ctx)
	cfg, err := cmdutil.RESTConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	cfg.UserAgent = "nativevirt-controller"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kv, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}

	collector := &ctrlmetrics.Collector{}
	stopMetrics, err := serveMetrics(ctx, o.MetricsAddr, kube, collector)
	if err != nil {
		return err
	}
	defer stopMetrics()
	var elector *leaderelection.LeaderElector
	runControllers := func(ctx context.Context) error {
		ctrls, err := NewControllers(kube, kv, o.launcherConfig(), o.Migration)
		if err != nil {
			return err
		}
		collector.Use(ctrls.Listers())
		defer collector.Use(nil)
		return ctrls.Run(ctx, o.Workers)
	}
	if !o.LeaderElect {
		stopHealth := serveHealth(ctx, o.HealthAddr, nil)
		defer stopHealth()
		return runControllers(ctx)
	}

	identity, err := os.Hostname()
	if err != nil {
		return err
	}
	identity += "_" + uuid.NewString()
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, o.LeaderElectNamespace, o.LeaderElectName,
		kube.CoreV1(), kube.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return err
	}
	watchdog := leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	var runErr error
	elector, err = leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   o.LeaseDuration,
		RenewDeadline:   o.RenewDeadline,
		RetryPeriod:     o.RetryPeriod,
		ReleaseOnCancel: true,
		WatchDog:        watchdog,
		Name:            o.LeaderElectName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				logger.Info("Leading; starting the controllers", "identity", identity)
				runErr = runControllers(ctx)
			},
			OnStoppedLeading: func() {
				logger.Info("Stopped leading", "identity", identity)
			},
			OnNewLeader: func(current string) {
				if current != identity {
					logger.Info("Another replica leads", "leader", current)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	stopHealth := serveHealth(ctx, o.HealthAddr, watchdog)
	defer stopHealth()
	elector.Run(ctx)
	if runErr != nil {
		return runErr
	}
	if ctx.Err() == nil {
		// Losing the lease while the process should go on: exit, and let the Deployment restart us
		// as a follower (another replica now acts; two leaders must never act at once).
		return errors.New("lost the leader lease")
	}
	return nil
}

// serveMetrics serves the collector on addr over HTTPS with a self-signed certificate (as
// kube-controller-manager does without --tls-cert-file) until ctx ends; it returns a function that
// stops it.
func serveMetrics(ctx context.Context, addr string, kube kubernetes.Interface, c *ctrlmetrics.Collector) (func(), error) {
	if addr == "" {
		return func() {}, nil
	}
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
	srv, err := metricsserver.Server(addr, cert, kube, c)
	if err != nil {
		return nil, err
	}
	srv.BaseContext = func(net.Listener) context.Context { return ctx }
	go func() {
		klog.FromContext(ctx).Info("Metrics served", "address", addr, "path", metricsserver.Path)
		if err := srv.ListenAndServeTLS("", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "Metrics endpoint failed", "addr", addr)
		}
	}()
	return func() { _ = srv.Close() }, nil
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
