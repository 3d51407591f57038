package bench

import (
	"context"
	"fmt"
	"net"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// The API paths compared side by side.
const (
	// Aggregated is (a): kube-apiserver proxies kubevirt.io to nativevirt-apiserver (APIService).
	Aggregated = "a"
	// Direct is (b): clients talk to nativevirt-apiserver itself.
	Direct = "b"
	// CRD is (c): a CustomResourceDefinition with the same schema, served by kube-apiserver.
	CRD = "c"
)

// VMResource is the kubevirt.io VirtualMachine resource.
var VMResource = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}

// Target is one way of serving VirtualMachines.
type Target struct {
	// Name is a, b or c; Label says what it is.
	Name  string
	Label string
	// Config reaches the server as the cluster admin.
	Config *rest.Config
	// Resource is the VirtualMachine resource on that server.
	Resource schema.GroupVersionResource
}

// GroupVersion is the apiVersion of the objects the target stores.
func (t Target) GroupVersion() schema.GroupVersion { return t.Resource.GroupVersion() }

// Client returns a dynamic client on its own connection: concurrent benchmark clients must not
// share one HTTP/2 connection the way clients of one process do (client-go caches transports
// by TLS configuration; a distinct dialer makes the cache key distinct).
func (t Target) Client() (dynamic.Interface, error) {
	return NewClient(t.Config)
}

// NewClient returns a dynamic client with its own connection and no client-side rate limit.
func NewClient(cfg *rest.Config) (dynamic.Interface, error) {
	return newClient(cfg, time.Minute)
}

// NewWatchClient is NewClient without the request timeout, for watches that last minutes.
func NewWatchClient(cfg *rest.Config) (dynamic.Interface, error) {
	return newClient(cfg, 0)
}

func newClient(cfg *rest.Config, timeout time.Duration) (dynamic.Interface, error) {
	return dynamic.NewForConfig(benchConfig(cfg, timeout))
}

// benchConfig is cfg for a benchmark client: its own connection, no client-side rate limit.
func benchConfig(cfg *rest.Config, timeout time.Duration) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS = -1 // no client-side throttling: the server is measured, not client-go's limiter
	c.Burst = 0
	// One request never takes a minute unless the server went away under it (a replaced pod
	// does not answer on its old address): fail instead of hanging the suite.
	c.Timeout = timeout
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	c.Dial = d.DialContext
	return c
}

// Clients returns n clients of the target.
func (t Target) Clients(n int) ([]dynamic.Interface, error) {
	out := make([]dynamic.Interface, n)
	for i := range out {
		c, err := t.Client()
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.Name, err)
		}
		out[i] = c
	}
	return out, nil
}

// DeleteAll deletes every object of the target's resource in namespace and waits until the
// namespace holds none (deletecollection, then polling), so that the next measurement starts
// from the same state.
func (t Target) DeleteAll(ctx context.Context, namespace string) error {
	c, err := t.Client()
	if err != nil {
		return err
	}
	r := c.Resource(t.Resource).Namespace(namespace)
	if err := r.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("target %s: delete the VirtualMachines of %s: %w", t.Name, namespace, err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		l, err := r.List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil && len(l.Items) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("target %s: VirtualMachines of %s still there after deletecollection (%v)", t.Name, namespace, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
