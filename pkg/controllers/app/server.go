package app

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/cmdutil"
	ctrlmetrics "github.com/nativevirt/nativevirt/pkg/controllers/metrics"
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

// Run runs the controllers until ctx ends, under leader election when enabled:
// options → config → completed config → server.
func Run(ctx context.Context, o *Options) error {
	cfg, err := o.Config()
	if err != nil {
		return err
	}
	completed, err := cfg.Complete()
	if err != nil {
		return err
	}
	srv, err := completed.New()
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// Server is nativevirt-controller, built and not started: the metrics and
// health endpoints and, when leader election is on, the elector that runs the
// controllers while this replica leads.
type Server struct {
	cfg       *completedConfig
	collector *ctrlmetrics.Collector
	metrics   *http.Server
	// lock is the leader Lease (nil: no leader election).
	lock resourcelock.Interface
}

// New builds the server.
func (c CompletedConfig) New() (*Server, error) {
	s := &Server{cfg: c.completedConfig, collector: &ctrlmetrics.Collector{}}
	if c.MetricsAddr != "" {
		var err error
		if s.metrics, err = metricsServer(c.MetricsAddr, c.Kube, s.collector); err != nil {
			return nil, err
		}
	}
	if le := c.LeaderElection; le != nil {
		var err error
		s.lock, err = resourcelock.New(resourcelock.LeasesResourceLock, le.Namespace, le.Name,
			c.Kube.CoreV1(), c.Kube.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: le.Identity})
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Run serves the endpoints and runs the controllers until ctx ends; with
// leader election, only while this replica leads.
func (s *Server) Run(ctx context.Context) error {
	defer serveMetrics(ctx, s.metrics)()
	if s.lock == nil {
		defer serveHealth(ctx, s.cfg.HealthAddr, nil)()
		return s.runControllers(ctx)
	}
	return s.runElected(ctx)
}

// runControllers builds the controllers and runs them until ctx ends.
func (s *Server) runControllers(ctx context.Context) error {
	c := s.cfg
	ctrls, err := NewControllers(c.Kube, c.KubeVirt, c.Launcher, c.NetworkAttachments, c.Migration)
	if err != nil {
		return err
	}
	s.collector.Use(ctrls.Listers())
	defer s.collector.Use(nil)
	return ctrls.Run(ctx, c.Workers)
}

// runElected runs the controllers while this replica holds the leader Lease.
func (s *Server) runElected(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	le := s.cfg.LeaderElection
	watchdog := leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	var runErr error
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            s.lock,
		LeaseDuration:   le.LeaseDuration,
		RenewDeadline:   le.RenewDeadline,
		RetryPeriod:     le.RetryPeriod,
		ReleaseOnCancel: true,
		WatchDog:        watchdog,
		Name:            le.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				logger.Info("Leading; starting the controllers", "identity", le.Identity)
				runErr = s.runControllers(ctx)
			},
			OnStoppedLeading: func() {
				logger.Info("Stopped leading", "identity", le.Identity)
			},
			OnNewLeader: func(current string) {
				if current != le.Identity {
					logger.Info("Another replica leads", "leader", current)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	defer serveHealth(ctx, s.cfg.HealthAddr, watchdog)()
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
