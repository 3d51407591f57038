package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
	kubeAPIServer := filepath.Join(e.Cluster.Root(), "_output", "bin", "kube-apiserver")
	withCRD := true
	if _, err := os.Stat(kubeAPIServer); err != nil {
		withCRD = false
		res.Note("no CRD (c) beside the server: %v (make k8s-binaries builds it)", err)
	} else if _, err := exec.LookPath("etcd"); err != nil {
		withCRD = false
		res.Note("no CRD (c) beside the server: no etcd on PATH")
	} else {
		res.Note("the CRD (c): the same VMs as a CustomResourceDefinition (schema from the server's OpenAPI, as in api-path) on a fresh kube-apiserver with its own empty etcd (both plain processes on 127.0.0.1, started for the scenario and stopped after it); kubectl gets alternate between the two")
	}
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
			h := s.scaleHost(ctx, kubectl, e.Logf)
			if !withCRD {
				return h, s.Stop, nil
			}
			k, err := StartFreshKube(ctx, kubeAPIServer, filepath.Join(e.opts.WorkDir, "fresh-kube"))
			if err != nil {
				return nil, nil, errors.Join(err, s.Stop())
			}
			e.Logf("%s: fresh kube-apiserver, pid %d (etcd %d)", res.Suite, k.PID, k.EtcdPID)
			if h.crd, err = k.crdHost(ctx, s.Config, kubectl); err != nil {
				return nil, nil, errors.Join(err, k.Stop(), s.Stop())
			}
			return h, func() error { return errors.Join(k.Stop(), s.Stop()) }, nil
		},
	})
}

// crdHost installs the CRD of target (c), with the schema of the nativevirt-apiserver of
// openapi, and gives the kube-apiserver as the scale suite's CRD beside the server.
func (k *FreshKube) crdHost(ctx context.Context, openapi *rest.Config, kubectl string) (*crdHost, error) {
	if _, err := installCRD(ctx, openapi, k.Config, func(string, func(context.Context) error) {}); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(k.Config)
	if err != nil {
		return nil, err
	}
	return &crdHost{
		target: Target{Name: CRD, Label: "fresh kube-apiserver, CRD", Config: k.Config, Resource: CRDResource},
		namespace: func(ctx context.Context, name string) error {
			_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			return err
		},
		kubectl: kubectlWith(ctx, kubectl, k.Kubeconfig),
	}, nil
}

// kubectlWith runs kubectl with a kubeconfig and returns its output.
func kubectlWith(ctx context.Context, kubectl, kubeconfig string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...).Output()
		if ee, ok := err.(*exec.ExitError); ok {
			err = fmt.Errorf("kubectl: %w: %s", err, ee.Stderr)
		}
		return string(out), err
	}
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
		kubectl:       kubectlWith(ctx, kubectl, s.Kubeconfig),
		footprint: func(ctx context.Context) (footprint, error) {
			return serverFootprint(ctx, func() (int, error) { return s.PID, nil }, s.Config)
		},
		metrics: s.Config,
		logf:    logf,
	}
}
