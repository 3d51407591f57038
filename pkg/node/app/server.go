package app

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/cmdutil"
	"github.com/nativevirt/nativevirt/pkg/metricsserver"
	"github.com/nativevirt/nativevirt/pkg/node/agent"
	"github.com/nativevirt/nativevirt/pkg/node/deviceplugin"
	"github.com/nativevirt/nativevirt/pkg/node/heartbeat"
	nodemetrics "github.com/nativevirt/nativevirt/pkg/node/metrics"
)

// NewCommand is the nativevirt-handler command.
func NewCommand(ctx context.Context) *cobra.Command {
	o := NewOptions()
	return cmdutil.NewCommand(ctx, cmdutil.Daemon{
		Use:      "nativevirt-handler",
		Short:    "NativeVirt node agent: runs the VMIs of this node in their launcher pods' libvirt",
		AddFlags: o.AddFlags,
		Validate: o.Validate,
		Run:      func(ctx context.Context) error { return Run(ctx, o) },
	})
}

// Run runs the agent until ctx ends: options → config → completed config →
// server.
func Run(ctx context.Context, o *Options) error {
	cfg, err := o.Config(ctx)
	if err != nil {
		return err
	}
	completed, err := cfg.Complete(ctx)
	if err != nil {
		return err
	}
	srv, err := completed.New()
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// tlsServer is an HTTPS server of the agent, what it serves and what its start logs.
type tlsServer struct {
	what string
	srv  *http.Server
	log  []any
}

// Server is the node agent, built and not started: the reconcile loop and its
// informers, the heartbeat, the stream and metrics servers and the device
// plugins.
type Server struct {
	cfg       *completedConfig
	agent     *agent.Agent
	events    *cmdutil.Events
	heartbeat *heartbeat.Heartbeat
	servers   []tlsServer
}

// New builds the server: the event recorder, the agent with its event
// handlers, the heartbeat and the HTTPS servers.
func (c CompletedConfig) New() (*Server, error) {
	events, err := cmdutil.NewEvents(c.Kube)
	if err != nil {
		return nil, err
	}
	s, err := c.build(events)
	if err != nil {
		events.Shutdown()
		return nil, err
	}
	return s, nil
}

// build builds the server on events (which the caller shuts down on failure).
func (c CompletedConfig) build(events *cmdutil.Events) (*Server, error) {
	recorder := events.Recorder(corev1.EventSource{Component: "nativevirt-handler", Host: c.NodeName})
	agentCfg := c.Agent
	agentCfg.Event = func(vmi *kubevirtv1.VirtualMachineInstance, eventType, reason, message string) {
		recorder.Event(vmi, eventType, reason, message)
	}
	a := agent.New(agentCfg)
	if err := a.AddEventHandlers(c.VMIs, c.Pods.Core().V1().Pods().Informer()); err != nil {
		return nil, err
	}
	if err := a.AddTargetEventHandlers(c.TargetVMIs); err != nil {
		return nil, err
	}
	s := &Server{
		cfg: c.completedConfig, agent: a, events: events,
		heartbeat: &heartbeat.Heartbeat{Client: c.Kube, NodeName: c.NodeName, Emulation: c.Emulation,
			Endpoint: c.Endpoint, CPUModels: c.CPUModels},
	}
	if c.TLS == nil {
		return s, nil
	}
	stream, err := streamServer(c.StreamAddress, c.TLS, a.Backend())
	if err != nil {
		return nil, err
	}
	s.servers = append(s.servers, tlsServer{"stream server", stream, []any{"advertised", c.Endpoint}})
	if c.MetricsAddress != "" {
		metrics, err := metricsServer(c.MetricsAddress, c.TLS, c.Kube, nodemetrics.NewCollector(c.NodeName, a.DomainStats))
		if err != nil {
			return nil, err
		}
		s.servers = append(s.servers, tlsServer{"metrics server", metrics, []any{"path", metricsserver.Path}})
	}
	return s, nil
}

// Run starts everything and runs until ctx ends or a part fails.
func (s *Server) Run(ctx context.Context) error {
	defer s.events.Shutdown()
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := s.cfg
	errs := make(chan error, 1+len(s.servers))
	go c.VMIs.Run(ctx.Done())
	go c.TargetVMIs.Run(ctx.Done())
	c.Pods.Start(ctx.Done())
	go func() {
		errs <- s.agent.Run(ctx, c.Workers, s.synced)
	}()
	go s.heartbeat.Run(ctx)
	for _, ts := range s.servers {
		logger.Info("Serving", append([]any{"server", ts.what, "address", ts.srv.Addr}, ts.log...)...)
		serveTLS(ctx, ts.srv, ts.what, errs)
	}
	if len(s.servers) == 0 {
		logger.Info("No TLS files given: console, VNC, pause and metrics are not served on this node")
	}
	for _, p := range c.DevicePlugins {
		go func(p *deviceplugin.Plugin) { _ = p.Run(ctx) }(p)
	}
	logger.Info("nativevirt-handler running", "node", c.NodeName, "emulation", c.Emulation)
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		return err
	}
}

// synced reports whether the server's informers have synced.
func (s *Server) synced() bool {
	return s.cfg.VMIs.HasSynced() && s.cfg.TargetVMIs.HasSynced() && s.cfg.Pods.Core().V1().Pods().Informer().HasSynced()
}
