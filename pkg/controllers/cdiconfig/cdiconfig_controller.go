// Package cdiconfig keeps CDI's cluster configuration object, CDIConfig `config`: it creates it
// when missing and publishes in status.uploadProxyURL where clients outside the cluster reach
// the upload proxy (`virtctl image-upload` reads it when the spec has no uploadProxyURLOverride):
// https://<a ready node's address>:<the NodePort of the upload proxy's Service>.
package cdiconfig

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
)

// Name is the controller's name in logs and metrics.
const Name = "cdiconfig-controller"

// ConfigName is the one CDIConfig's name.
const ConfigName = "config"

// UploadProxyService is the NodePort Service of the upload proxy, in the controller's namespace.
const UploadProxyService = "nativevirt-uploadproxy"

// resync is how often the URL is checked again (nodes and their addresses come and go).
const resync = time.Minute

// Controller is the CDIConfig controller.
type Controller struct {
	queue  *loop.Queue
	nodes  corelisters.NodeLister
	synced []cache.InformerSynced

	get          func(ctx context.Context) (*v1beta1.CDIConfig, error)
	create       func(ctx context.Context, c *v1beta1.CDIConfig) (*v1beta1.CDIConfig, error)
	updateStatus func(ctx context.Context, c *v1beta1.CDIConfig) error
	// nodePort is the upload proxy Service's node port (0: none).
	nodePort func(ctx context.Context) (int32, error)
}

// New wires the controller; namespace holds the upload proxy's Service.
func New(kube kubernetes.Interface, client versioned.Interface, nodes coreinformers.NodeInformer, namespace string) *Controller {
	api := client.CdiV1beta1().CDIConfigs()
	c := &Controller{nodes: nodes.Lister(), synced: []cache.InformerSynced{nodes.Informer().HasSynced}}
	c.queue = loop.New(Name, c.sync)
	c.get = func(ctx context.Context) (*v1beta1.CDIConfig, error) {
		return api.Get(ctx, ConfigName, metav1.GetOptions{})
	}
	c.create = func(ctx context.Context, cfg *v1beta1.CDIConfig) (*v1beta1.CDIConfig, error) {
		return api.Create(ctx, cfg, metav1.CreateOptions{})
	}
	c.updateStatus = func(ctx context.Context, cfg *v1beta1.CDIConfig) error {
		_, err := api.UpdateStatus(ctx, cfg, metav1.UpdateOptions{})
		return err
	}
	c.nodePort = func(ctx context.Context) (int32, error) {
		svc, err := kube.CoreV1().Services(namespace).Get(ctx, UploadProxyService, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		for _, p := range svc.Spec.Ports {
			if p.NodePort != 0 {
				return p.NodePort, nil
			}
		}
		return 0, nil
	}
	return c
}

// Run keeps the configuration until ctx ends.
func (c *Controller) Run(ctx context.Context, _ int) error {
	c.queue.Add(ConfigName)
	return c.queue.Run(ctx, 1, c.synced...)
}

func (c *Controller) sync(ctx context.Context, _ string) (loop.Result, error) {
	cfg, err := c.get(ctx)
	if apierrors.IsNotFound(err) {
		if cfg, err = c.create(ctx, &v1beta1.CDIConfig{ObjectMeta: metav1.ObjectMeta{Name: ConfigName}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return loop.Result{}, fmt.Errorf("creating CDIConfig %s: %w", ConfigName, err)
		}
		if err != nil {
			return loop.Result{RequeueAfter: time.Second}, nil
		}
	} else if err != nil {
		return loop.Result{}, err
	}
	port, err := c.nodePort(ctx)
	if err != nil {
		return loop.Result{}, err
	}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return loop.Result{}, err
	}
	url := UploadProxyURL(nodes, port)
	have := ""
	if cfg.Status.UploadProxyURL != nil {
		have = *cfg.Status.UploadProxyURL
	}
	if have == url {
		return loop.Result{RequeueAfter: resync}, nil
	}
	cfg = cfg.DeepCopy()
	cfg.Status.UploadProxyURL = nil
	if url != "" {
		cfg.Status.UploadProxyURL = &url
	}
	return loop.Result{RequeueAfter: resync}, c.updateStatus(ctx, cfg)
}

// UploadProxyURL is https://<address>:<port> of the first ready node (by name) with an
// internal (else external) IP address; "" without a port or such a node. Keeping the same node
// while it stays ready keeps the URL stable.
func UploadProxyURL(nodes []*corev1.Node, port int32) string {
	if port == 0 {
		return ""
	}
	nodes = slices.Clone(nodes)
	slices.SortFunc(nodes, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	for _, n := range nodes {
		if !ready(n) || n.Spec.Unschedulable {
			continue
		}
		for _, t := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP} {
			for _, a := range n.Status.Addresses {
				if a.Type == t && a.Address != "" {
					return "https://" + net.JoinHostPort(a.Address, strconv.Itoa(int(port)))
				}
			}
		}
	}
	return ""
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
