package bench

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// serverExe is the executable name of nativevirt-apiserver.
const serverExe = "nativevirt-apiserver"

// useDeployment uses NativeVirt as deployed in the cluster (hack/deploy-local.sh), deploying it
// first when it is not there; a deployment made here is removed again by Close.
func (e *Env) useDeployment(ctx context.Context) error {
	_, err := e.Dynamic.Resource(apiServiceResource).Get(ctx, "v1.kubevirt.io", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if e.deployScript() == "" {
			return fmt.Errorf("NativeVirt is not deployed and there is no hack/deploy-local.sh")
		}
		e.Logf("NativeVirt is not deployed: hack/deploy-local.sh")
		if err := e.Cluster.Run(ctx, "hack/deploy-local.sh"); err != nil {
			return err
		}
		overlay := filepath.Join(e.Cluster.Dir(), "deploy")
		e.OnClose("NativeVirt deployment (made by this run)", func(ctx context.Context) error {
			_, err := e.Cluster.Kubectl("delete", "-k", overlay, "--ignore-not-found", "--wait=true")
			return err
		})
	} else if err != nil {
		return err
	} else if !e.opts.AsDeployed && e.deployScript() != "" {
		e.Logf("NativeVirt is deployed: hack/deploy-local.sh brings it up to date with this tree")
		if err := e.Cluster.Run(ctx, "hack/deploy-local.sh"); err != nil {
			return err
		}
	}
	if err := e.waitAPIServiceAvailable(ctx, "v1.kubevirt.io", 3*time.Minute); err != nil {
		return fmt.Errorf("%w; the deployment is broken (kubectl -n nativevirt get pods), or run with -mode=process after removing it", err)
	}
	apisvc, err := e.Dynamic.Resource(apiServiceResource).Get(ctx, "v1.kubevirt.io", metav1.GetOptions{})
	if err != nil {
		return err
	}
	ns, _, _ := unstructured.NestedString(apisvc.Object, "spec", "service", "namespace")
	name, _, _ := unstructured.NestedString(apisvc.Object, "spec", "service", "name")
	caBundle, _, _ := unstructured.NestedString(apisvc.Object, "spec", "caBundle")
	ca, err := base64.StdEncoding.DecodeString(caBundle)
	if err != nil {
		return fmt.Errorf("APIService v1.kubevirt.io caBundle: %w", err)
	}
	svc, err := e.KubeClient.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pod, port, err := e.servingPod(ctx, svc)
	if err != nil {
		return err
	}
	e.Direct = directConfig(e.Kube, net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(port)), ca, name+"."+ns+".svc")
	refresh := func(ctx context.Context) error {
		// Another user of the shared cluster may have replaced the pod (a new address).
		if err := e.waitAPIServiceAvailable(ctx, "v1.kubevirt.io", 3*time.Minute); err != nil {
			return err
		}
		pod, port, err := e.servingPod(ctx, svc)
		if err != nil {
			return err
		}
		*e.Direct = *directConfig(e.Kube, net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(port)), ca, name+"."+ns+".svc")
		// Available can precede the proxy's own view of the endpoints by a moment.
		return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := GetRaw(ctx, e.Kube, "/apis/kubevirt.io/v1")
			return err == nil, nil
		})
	}
	e.Server = &Server{
		Refresh: refresh,
		ID: func(ctx context.Context) string {
			p, _, err := e.servingPod(ctx, svc)
			if err != nil {
				return "none: " + err.Error()
			}
			// A container restart (an OOM kill, a crash) keeps the pod: count restarts too.
			restarts := int32(0)
			for _, c := range p.Status.ContainerStatuses {
				restarts += c.RestartCount
			}
			return fmt.Sprintf("pod %s restarts %d", p.UID, restarts)
		},
		LastTermination: func(ctx context.Context, since time.Time) string {
			pods, err := e.KubeClient.CoreV1().Pods(svc.Namespace).List(ctx, metav1.ListOptions{
				LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String(),
			})
			if err != nil {
				return ""
			}
			for _, p := range pods.Items {
				if p.DeletionTimestamp != nil {
					continue // replaced (a redeployment), not failed
				}
				for _, c := range p.Status.ContainerStatuses {
					// Terminated now (not restarted yet), or the last one before the restart.
					for _, t := range []*corev1.ContainerStateTerminated{c.State.Terminated, c.LastTerminationState.Terminated} {
						if t != nil && !t.FinishedAt.Time.Before(since) {
							return fmt.Sprintf("%s (exit code %d) at %s%s", t.Reason, t.ExitCode,
								t.FinishedAt.UTC().Format(time.TimeOnly), e.killedBecause(ctx, &p, since))
						}
					}
				}
			}
			return ""
		},
		Mode:     ModeDeployed,
		Describe: fmt.Sprintf("deployed: pod %s/%s (%s:%d), %s", pod.Namespace, pod.Name, pod.Status.PodIP, port, podResources(pod)),
		PID: func() (int, error) {
			p, _, err := e.servingPod(context.Background(), svc)
			if err != nil {
				return 0, err
			}
			return PodProcess(string(p.UID), serverExe)
		},
	}
	weight := "unknown"
	if pid, err := e.Server.PID(); err == nil {
		if w, err := CPUShares(pid); err == nil {
			weight = w
		}
	}
	e.Server.Notes = []string{"kube-apiserver, which serves (c) and proxies (a), is a plain process of the machine; " +
		"nativevirt-apiserver, which serves (a) and (b), runs in its pod (" + podResources(pod) + "; " + weight +
		" from the pod up): when other work keeps the CPUs busy it gets a smaller share than kube-apiserver"}
	return nil
}

// killedBecause finds why the kubelet killed a container of pod since then (its Killing event,
// e.g. a failed liveness probe), as ", <message>", or "".
func (e *Env) killedBecause(ctx context.Context, pod *corev1.Pod, since time.Time) string {
	evs, err := e.KubeClient.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.uid=" + string(pod.UID) + ",reason=Killing",
	})
	if err != nil {
		return ""
	}
	for _, ev := range evs.Items {
		if !ev.LastTimestamp.Time.Before(since.Add(-time.Second)) || !ev.EventTime.Time.Before(since.Add(-time.Second)) {
			return ", " + ev.Message
		}
	}
	return ""
}

// servingPod finds the running, ready pod behind a Service and its container port.
func (e *Env) servingPod(ctx context.Context, svc *corev1.Service) (*corev1.Pod, int, error) {
	if len(svc.Spec.Selector) == 0 || len(svc.Spec.Ports) == 0 {
		return nil, 0, fmt.Errorf("service %s/%s has no selector or no port", svc.Namespace, svc.Name)
	}
	pods, err := e.KubeClient.CoreV1().Pods(svc.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String(),
	})
	if err != nil {
		return nil, 0, err
	}
	target := svc.Spec.Ports[0].TargetPort
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || !podReady(p) {
			continue
		}
		if target.IntValue() != 0 {
			return p, target.IntValue(), nil
		}
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == target.String() {
					return p, int(cp.ContainerPort), nil
				}
			}
		}
		return nil, 0, fmt.Errorf("pod %s has no container port %q", p.Name, target.String())
	}
	return nil, 0, fmt.Errorf("no ready pod behind service %s/%s", svc.Namespace, svc.Name)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podResources describes the first container's CPU and memory requests and limits.
func podResources(p *corev1.Pod) string {
	if len(p.Spec.Containers) == 0 {
		return "no containers"
	}
	r := p.Spec.Containers[0].Resources
	return fmt.Sprintf("requests cpu %s memory %s, limits cpu %s memory %s",
		r.Requests.Cpu(), r.Requests.Memory(), r.Limits.Cpu(), r.Limits.Memory())
}

// directConfig reaches nativevirt-apiserver at hostPort with the admin's credentials,
// verifying its serving certificate as kube-apiserver does (CA bundle, service DNS name).
func directConfig(kube *rest.Config, hostPort string, ca []byte, serverName string) *rest.Config {
	c := rest.AnonymousClientConfig(kube)
	c.Host = "https://" + hostPort
	c.BearerToken = kube.BearerToken
	c.BearerTokenFile = kube.BearerTokenFile
	c.TLSClientConfig = rest.TLSClientConfig{
		CAData:     ca,
		ServerName: serverName,
		CertFile:   kube.CertFile, KeyFile: kube.KeyFile, CertData: kube.CertData, KeyData: kube.KeyData,
	}
	c.QPS, c.Burst = -1, 0
	return c
}
