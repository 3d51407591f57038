package bench

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// RunScaleFresh is the scale suite on fresh standalone nativevirt-apiserver processes, one per
// scenario, each started with an empty embedded etcd for its scenario and stopped after it: every
// figure is that of a server holding the scenario's VMs, with no history of the other scenario,
// of earlier runs or of other users. The VMs are read back directly (there is no kube-apiserver
// in front) and with kubectl pointed at the process. Memory after churn is the scale suite's.
func RunScaleFresh(ctx context.Context, e *Env, cfg ScaleConfig) (*Result, error) {
	res := &Result{Suite: "scale-fresh", Title: fmt.Sprintf("Scale: %d VirtualMachines on a fresh nativevirt-apiserver process", cfg.VMs)}
	bin := filepath.Join(e.Cluster.Root(), "_output", "bin", serverExe)
	kubectl := filepath.Join(e.Cluster.Root(), "_output", "bin", "kubectl")
	res.Notes = append(res.Notes,
		"each scenario runs on its own fresh process, which is stopped after it: the figures are those of a server holding the scenario's VMs, not of one that held the other scenario's VMs before (that is the scale suite's)",
		"no controller watches these servers: nothing writes beside the benchmark")
	return runScale(ctx, cfg, res, scaleServers{
		label: "a fresh nativevirt-apiserver --standalone process per scenario (empty embedded etcd, started for the scenario and stopped after it), reached directly on 127.0.0.1",
		via:   "directly to the process",
		open: func(ctx context.Context) (*scaleHost, func() error, error) {
			s, err := StartStandalone(ctx, bin, filepath.Join(e.opts.WorkDir, "fresh"))
			if err != nil {
				return nil, nil, err
			}
			e.Logf("%s: fresh nativevirt-apiserver, pid %d", res.Suite, s.PID)
			return s.scaleHost(ctx, kubectl, e.Logf), s.Stop, nil
		},
	})
}

// scaleHost is the process as the scale suite's server.
func (s *Standalone) scaleHost(ctx context.Context, kubectl string, logf func(string, ...any)) *scaleHost {
	t := Target{Name: Direct, Label: "fresh standalone process", Config: s.Config, Resource: VMResource}
	noop := func(context.Context, string) error { return nil }
	return &scaleHost{
		create:        t,
		reads:         []Target{t},
		namespace:     noop, // standalone mode has no namespace admission
		dropNamespace: noop,
		kubectl: func(args ...string) (string, error) {
			out, err := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", s.Kubeconfig}, args...)...).Output()
			if ee, ok := err.(*exec.ExitError); ok {
				err = fmt.Errorf("kubectl: %w: %s", err, ee.Stderr)
			}
			return string(out), err
		},
		footprint: func(ctx context.Context) (footprint, error) {
			return serverFootprint(ctx, func() (int, error) { return s.PID, nil }, s.Config)
		},
		metrics: s.Config,
		logf:    logf,
	}
}
