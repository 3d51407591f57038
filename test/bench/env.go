package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

// Modes of reaching nativevirt-apiserver.
const (
	// ModeAuto uses the deployment when there is one, else deploys it with hack/deploy-local.sh,
	// else runs the server as a process of this machine.
	ModeAuto = "auto"
	// ModeDeployed uses (and if needed creates) the deployment of hack/deploy-local.sh.
	ModeDeployed = "deployed"
	// ModeProcess runs _output/bin/nativevirt-apiserver as a process of this machine, registered
	// with kube-apiserver through a Service without selector and an EndpointSlice.
	ModeProcess = "process"
)

// apiServiceResource is apiregistration.k8s.io/v1 APIService (handled unstructured).
var apiServiceResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// Options configure the environment.
type Options struct {
	// Mode is ModeAuto, ModeDeployed or ModeProcess.
	Mode string
	// WorkDir holds what the benchmark creates on disk (certificates, the process's data).
	WorkDir string
	// KeepCluster leaves a cluster this run brought up running.
	KeepCluster bool
	// AsDeployed measures a deployment found in the cluster as it is. Otherwise it is first
	// brought up to date with this tree (hack/deploy-local.sh, which restarts only the pods whose
	// image changed): the images in the node's containerd are those of the last deployment, not
	// necessarily of the binaries just built.
	AsDeployed bool
	// Log receives progress lines.
	Log io.Writer
}

// Env is what the suites run against: the local cluster and nativevirt-apiserver behind it.
type Env struct {
	// Cluster is the local cluster of hack/cluster.
	Cluster *framework.Cluster
	// Kube reaches kube-apiserver as the cluster admin; KubeClient and Dynamic are its clients.
	Kube       *rest.Config
	KubeClient kubernetes.Interface
	Dynamic    dynamic.Interface
	// Direct reaches nativevirt-apiserver itself (not through kube-apiserver) as the admin.
	Direct *rest.Config
	// Server describes the nativevirt-apiserver under test.
	Server *Server

	opts         Options
	cleanups     []cleanup
	namespaces   []string
	crdInstalled bool
}

type cleanup struct {
	what string
	fn   func(context.Context) error
}

// Server is the nativevirt-apiserver under test.
type Server struct {
	// Mode is ModeDeployed or ModeProcess; Describe says where it runs.
	Mode     string
	Describe string
	// PID finds the server's process (it may move when the pod restarts).
	PID func() (int, error)
	// Notes are caveats of the mode, printed with the results.
	Notes []string
	// Refresh waits until the server is available and updates Env.Direct in place when its
	// address changed (nil: it cannot change).
	Refresh func(context.Context) error
	// ID identifies the server instance (the pod's UID, the process's PID): a suite during
	// which it changed measured a restart, not the server.
	ID func(context.Context) string
	// LastTermination says how the server's previous container ended, if it did after since
	// ("OOMKilled (exit code 137) at 07:35:59"); nil or "" when unknown.
	LastTermination func(ctx context.Context, since time.Time) string
}

// Logf prints one progress line.
func (e *Env) Logf(format string, args ...any) {
	fmt.Fprintf(e.opts.Log, "[bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// OnClose registers fn to run at Close, in reverse order of registration.
func (e *Env) OnClose(what string, fn func(context.Context) error) {
	e.cleanups = append(e.cleanups, cleanup{what, fn})
}

// NewEnv is the environment of suites that start their own server (scale-fresh): the
// repository (its _output/bin) and the work directory. It does not touch the cluster; Kube,
// Direct and Server stay nil.
func NewEnv(o Options) (*Env, error) {
	if o.Log == nil {
		o.Log = os.Stderr
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return nil, err
	}
	c, err := framework.New()
	if err != nil {
		return nil, err
	}
	return &Env{Cluster: c, opts: o}, nil
}

// Setup is NewEnv that also brings the cluster up when it is down and makes nativevirt-apiserver
// reachable both through kube-apiserver and directly.
func Setup(ctx context.Context, o Options) (*Env, error) {
	e, err := NewEnv(o)
	if err != nil {
		return nil, err
	}
	c := e.Cluster
	if !c.IsUp(ctx) {
		e.Logf("local cluster is down: hack/cluster/up.sh")
		if err := c.Up(ctx); err != nil {
			return nil, err
		}
	}
	if c.StartedHere() && !o.KeepCluster {
		e.OnClose("local cluster (started by this run)", func(context.Context) error { return c.Down() })
	}
	if e.Kube, err = c.RESTConfig(); err != nil {
		return e, err
	}
	e.Kube.QPS, e.Kube.Burst = -1, 0
	if e.KubeClient, err = kubernetes.NewForConfig(e.Kube); err != nil {
		return e, err
	}
	if e.Dynamic, err = dynamic.NewForConfig(e.Kube); err != nil {
		return e, err
	}
	if err := e.setupServer(ctx); err != nil {
		return e, err
	}
	e.OnClose("wait for the benchmark's namespaces to be gone", e.waitNamespacesGone)
	return e, nil
}

func (e *Env) setupServer(ctx context.Context) error {
	if err := e.deleteLeftoverAPIServices(ctx); err != nil {
		return err
	}
	mode := e.opts.Mode
	if mode == ModeAuto || mode == "" {
		_, err := e.Dynamic.Resource(apiServiceResource).Get(ctx, "v1.kubevirt.io", metav1.GetOptions{})
		switch {
		case err == nil:
			mode = ModeDeployed
		case apierrors.IsNotFound(err) && e.deployScript() != "":
			mode = ModeDeployed
		case apierrors.IsNotFound(err):
			mode = ModeProcess
		default:
			return err
		}
	}
	switch mode {
	case ModeDeployed:
		return e.useDeployment(ctx)
	case ModeProcess:
		return e.startProcess(ctx)
	}
	return fmt.Errorf("unknown mode %q (want %s, %s or %s)", mode, ModeAuto, ModeDeployed, ModeProcess)
}

// deployScript is hack/deploy-local.sh when it exists.
func (e *Env) deployScript() string {
	p := filepath.Join(e.Cluster.Root(), "hack", "deploy-local.sh")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// Close undoes what Setup and the suites created, newest first, and reports every failure.
func (e *Env) Close(ctx context.Context) error {
	var errs []error
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		c := e.cleanups[i]
		e.Logf("clean up: %s", c.what)
		if err := c.fn(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.what, err))
		}
	}
	e.cleanups = nil
	return errors.Join(errs...)
}

// Namespace creates a namespace for a suite; Close deletes it and waits until it is gone (the
// namespace controller also deletes the kubevirt.io and CRD objects in it).
func (e *Env) Namespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"nativevirt.io/bench": "true"}}}
	if _, err := e.KubeClient.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		if err := e.waitNamespaceActive(ctx, name); err != nil {
			return err
		}
	}
	if slices.Contains(e.namespaces, name) { // a suite run again
		return nil
	}
	e.namespaces = append(e.namespaces, name)
	e.OnClose("namespace "+name, func(ctx context.Context) error {
		err := e.KubeClient.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	return nil
}

// waitNamespacesGone waits until every namespace made by Namespace is gone; registered before
// them, it runs after their deletions, which then proceed in parallel.
func (e *Env) waitNamespacesGone(ctx context.Context) error {
	for _, ns := range e.namespaces {
		if err := e.DeleteNamespace(ctx, ns); err != nil {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	return nil
}

// waitNamespaceActive waits for a namespace left terminating by an earlier run to go away and
// recreates it.
func (e *Env) waitNamespaceActive(ctx context.Context, name string) error {
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		ns, err := e.KubeClient.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = e.KubeClient.CoreV1().Namespaces().Create(ctx,
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"nativevirt.io/bench": "true"}}},
				metav1.CreateOptions{})
			return err == nil, ignoreExists(err)
		}
		if err != nil {
			return false, err
		}
		return ns.Status.Phase == corev1.NamespaceActive, nil
	})
}

// ignoreExists turns AlreadyExists (a race with another creator) into "try again".
func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// DeleteNamespace deletes a namespace and waits until it is gone.
func (e *Env) DeleteNamespace(ctx context.Context, name string) error {
	err := e.KubeClient.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := e.KubeClient.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// waitAPIServiceAvailable waits for the Available condition of an APIService.
func (e *Env) waitAPIServiceAvailable(ctx context.Context, name string, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		u, err := e.Dynamic.Resource(apiServiceResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Available" {
				last = fmt.Sprintf("%v (%v): %v", m["status"], m["reason"], m["message"])
				return m["status"] == "True", nil
			}
		}
		last = "no Available condition yet"
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("APIService %s is not Available after %s: %s", name, timeout, last)
	}
	return nil
}
