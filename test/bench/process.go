package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// The process mode's objects in kube-apiserver.
const (
	// benchLabel marks the APIServices the process mode registers.
	benchLabel       = "nativevirt.io/bench"
	processNamespace = "nativevirt-bench-system"
	processService   = "nativevirt-bench-apiserver"
	// bridgeIP is the address of the cluster bridge on this machine (hack/cluster/lib.sh): the
	// process listens there so that kube-apiserver can dial it (an EndpointSlice cannot point at
	// a loopback address).
	bridgeIP = "10.88.0.1"
)

// processAPIServices are the group versions the process mode routes to its process, as the
// deployment's APIServices do for the group versions the benchmark and the namespace controller
// reach through kube-apiserver. Each is registered under its usual name, labelled
// nativevirt.io/bench so that a later run can tell it from a deployment's.
var processAPIServices = []schema.GroupVersion{
	{Group: "kubevirt.io", Version: "v1"},
	{Group: "instancetype.kubevirt.io", Version: "v1beta1"},
}

// apiServiceName is the name of the APIService of gv (version.group).
func apiServiceName(gv schema.GroupVersion) string { return gv.Version + "." + gv.Group }

// startProcess runs _output/bin/nativevirt-apiserver on this machine with delegated
// authentication and authorization (as in a pod, but with the admin's kubeconfig), registers it
// with kube-apiserver (Service without selector, EndpointSlice, the APIServices of
// processAPIServices) and waits until the APIServices are Available. Close stops it and deletes
// what was registered.
func (e *Env) startProcess(ctx context.Context) error {
	root := e.Cluster.Root()
	bin := filepath.Join(root, "_output", "bin", serverExe)
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s: build it first (make build or go build -o _output/bin/ ./cmd/%s)", bin, serverExe)
	}
	port, err := freePort(bridgeIP)
	if err != nil {
		return err
	}
	certDir := filepath.Join(e.opts.WorkDir, "certs")
	dnsName := processService + "." + processNamespace + ".svc"
	out, err := exec.CommandContext(ctx, filepath.Join(root, "hack", "cluster", "serving-cert.sh"), certDir, dnsName).Output()
	if err != nil {
		return fmt.Errorf("serving-cert.sh: %w", err)
	}
	caBundle := strings.TrimSpace(string(out))
	ca, err := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	if err != nil {
		return err
	}

	dataDir := filepath.Join(e.opts.WorkDir, "apiserver-data")
	if err := os.RemoveAll(dataDir); err != nil {
		return err
	}
	kubeconfig := e.Cluster.Kubeconfig("")
	logPath := filepath.Join(e.opts.WorkDir, "nativevirt-apiserver.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin,
		"--bind-address="+bridgeIP, "--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+filepath.Join(certDir, "tls.crt"), "--tls-private-key-file="+filepath.Join(certDir, "tls.key"),
		"--data-dir="+dataDir, "--embedded-etcd-port=0",
		"--kubeconfig="+kubeconfig, "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return err
	}
	pid := cmd.Process.Pid
	e.Logf("nativevirt-apiserver process %d on %s:%d (log %s)", pid, bridgeIP, port, logPath)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logFile.Close() }()
	e.OnClose(fmt.Sprintf("nativevirt-apiserver process %d and its data", pid), func(context.Context) error {
		if err := stopProcess(cmd.Process, exited, 30*time.Second); err != nil {
			return err
		}
		return os.RemoveAll(dataDir)
	})

	e.Direct = directConfig(e.Kube, net.JoinHostPort(bridgeIP, strconv.Itoa(port)), ca, dnsName)
	if err := waitReadyz(ctx, e.Direct, exited, 90*time.Second); err != nil {
		return fmt.Errorf("%w (log: %s)", err, logPath)
	}
	if err := e.registerProcess(ctx, port, caBundle); err != nil {
		return err
	}
	e.Server = &Server{
		Mode:     ModeProcess,
		Describe: fmt.Sprintf("process %d on %s:%d (%s)", pid, bridgeIP, port, bin),
		PID:      func() (int, error) { return pid, nil },
		ID:       func(context.Context) string { return strconv.Itoa(pid) },
		Notes: []string{"nativevirt-apiserver ran as a plain process of the machine, like kube-apiserver " +
			"(no pod CPU weight), with delegated authentication and authorization"},
	}
	return nil
}

// registerProcess makes kube-apiserver route processAPIServices to the process.
func (e *Env) registerProcess(ctx context.Context, port int, caBundle string) error {
	// Not Env.Namespace: this namespace must outlive the suites' namespaces, whose deletion
	// needs the APIService (the namespace controller deletes their kubevirt.io objects).
	if err := e.DeleteNamespace(ctx, processNamespace); err != nil { // left by an interrupted run
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: processNamespace}}
	if _, err := e.KubeClient.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	e.OnClose("namespace "+processNamespace, func(ctx context.Context) error { return e.DeleteNamespace(ctx, processNamespace) })
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: processService, Namespace: processNamespace},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(int32(port)),
		}}},
	}
	if _, err := e.KubeClient.CoreV1().Services(processNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: processService, Namespace: processNamespace, Labels: map[string]string{
			discoveryv1.LabelServiceName: processService,
			discoveryv1.LabelManagedBy:   "nativevirt-bench",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{bridgeIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if _, err := e.KubeClient.DiscoveryV1().EndpointSlices(processNamespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, gv := range processAPIServices {
		if err := e.registerAPIService(ctx, gv, caBundle); err != nil {
			return err
		}
	}
	for _, gv := range processAPIServices {
		if err := e.waitAPIServiceAvailable(ctx, apiServiceName(gv), 2*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// registerAPIService routes gv to the process's Service, and unregisters it at Close.
func (e *Env) registerAPIService(ctx context.Context, gv schema.GroupVersion, caBundle string) error {
	name := apiServiceName(gv)
	apisvc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": name, "labels": map[string]any{benchLabel: "true"}},
		"spec": map[string]any{
			"group": gv.Group, "version": gv.Version,
			"groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"caBundle": caBundle,
			"service":  map[string]any{"namespace": processNamespace, "name": processService, "port": int64(443)},
		},
	}}
	if _, err := e.Dynamic.Resource(apiServiceResource).Create(ctx, apisvc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("register APIService %s: %w", name, err)
	}
	e.OnClose("APIService "+name+" (of the process)", func(ctx context.Context) error {
		err := e.Dynamic.Resource(apiServiceResource).Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	return nil
}

// deleteLeftoverAPIServices deletes the APIServices an interrupted run in process mode left: their
// process is gone, and an unavailable APIService blocks the deletion of every namespace.
func (e *Env) deleteLeftoverAPIServices(ctx context.Context) error {
	for _, gv := range processAPIServices {
		name := apiServiceName(gv)
		svc, err := e.Dynamic.Resource(apiServiceResource).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if svc.GetLabels()[benchLabel] != "true" {
			continue // a deployment's
		}
		e.Logf("deleting APIService %s left by an interrupted benchmark", name)
		if err := e.Dynamic.Resource(apiServiceResource).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// freePort returns a TCP port that is free on ip right now.
func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("listen on %s (is the cluster bridge up?): %w", ip, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReadyz polls /readyz (always allowed without credentials) until it answers ok.
func waitReadyz(ctx context.Context, cfg *rest.Config, exited <-chan error, timeout time.Duration) error {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("nativevirt-apiserver exited: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		resp, err := hc.Get(cfg.Host + "/readyz")
		if err != nil {
			last = err
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		last = fmt.Errorf("/readyz: %s", resp.Status)
	}
	return fmt.Errorf("nativevirt-apiserver not ready after %s: %v", timeout, last)
}

// stopProcess sends SIGTERM, waits for the exit and kills the process after grace.
func stopProcess(p *os.Process, exited <-chan error, grace time.Duration) error {
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return nil // already gone
	}
	select {
	case <-exited:
		return nil
	case <-time.After(grace):
		_ = p.Kill()
		<-exited
		return fmt.Errorf("process %d ignored SIGTERM for %s and was killed", p.Pid, grace)
	}
}
