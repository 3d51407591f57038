package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	vmiinformers "github.com/nativevirt/nativevirt/pkg/client/informers/externalversions/kubevirt/v1"
	listers "github.com/nativevirt/nativevirt/pkg/client/listers/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/cmdutil"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/metricsserver"
	"github.com/nativevirt/nativevirt/pkg/node/agent"
	"github.com/nativevirt/nativevirt/pkg/node/deviceplugin"
	"github.com/nativevirt/nativevirt/pkg/node/domains"
	"github.com/nativevirt/nativevirt/pkg/node/heartbeat"
	nodemetrics "github.com/nativevirt/nativevirt/pkg/node/metrics"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/qemucaps"
	"github.com/nativevirt/nativevirt/pkg/node/streamserver"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// informerResync re-delivers every VMI periodically: the agent's resync of
// domain state and guest OS info.
const informerResync = 30 * time.Second

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

// Run runs the agent until ctx ends.
func Run(ctx context.Context, o *Options) error {
	logger := klog.FromContext(ctx)
	cfg, err := cmdutil.RESTConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	cfg = o.clientConfig(cfg)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kv, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	emulation := o.emulate()
	store, err := domains.Open(filepath.Join(o.StateDir, "domains"))
	if err != nil {
		return err
	}

	vmiInformer := vmiinformers.NewFilteredVirtualMachineInstanceInformer(kv, metav1.NamespaceAll, informerResync, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
	}, func(opts *metav1.ListOptions) {
		opts.FieldSelector = fields.OneTermEqualSelector("status.nodeName", o.NodeName).String()
	})
	podFactory := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithTweakListOptions(func(opts *metav1.ListOptions) {
		opts.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", o.NodeName).String()
		opts.LabelSelector = labels.SelectorFromSet(labels.Set{kubevirtv1.AppLabel: "virt-launcher"}).String()
	}))
	podInformer := podFactory.Core().V1().Pods()
	// The VMIs migrating to this node, before their handover.
	targetInformer := vmiinformers.NewFilteredVirtualMachineInstanceInformer(kv, metav1.NamespaceAll, informerResync, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
	}, func(opts *metav1.ListOptions) {
		opts.LabelSelector = labels.SelectorFromSet(labels.Set{kubevirtv1.MigrationTargetNodeNameLabel: o.NodeName}).String()
	})

	hostIP, err := nodeAddress(ctx, kube, o.NodeName)
	if err != nil && o.AdvertiseAddress == "" {
		return err
	}
	endpoint := o.endpoint(hostIP)
	var tlsFiles *tlsFiles
	migration := agent.MigrationConfig{
		ProgressTimeout:         o.MigrationProgressTimeout,
		CompletionTimeoutPerGiB: o.MigrationCompletionTimeoutPerGiB,
		BandwidthMiB:            o.MigrationBandwidthMiB,
	}
	if o.TLSCertFile != "" {
		if tlsFiles, err = readTLSFiles(o); err != nil {
			return err
		}
		dial, err := tunnelDialer(tlsFiles)
		if err != nil {
			return err
		}
		if !tlsFiles.clientUsage() {
			logger.Info("The node agent certificate has no clientAuth usage: migrations FROM this node will be refused by the target agents", "file", o.TLSCertFile)
		}
		migration.Endpoint, migration.DialTunnel = endpoint, dial
	}

	events, err := cmdutil.NewEvents(kube)
	if err != nil {
		return err
	}
	defer events.Shutdown()
	recorder := events.Recorder(corev1.EventSource{Component: "nativevirt-handler", Host: o.NodeName})
	agentCfg := agent.Config{
		NodeName:     o.NodeName,
		Locator:      podfs.Locator{KubeletRoot: o.KubeletRoot},
		Store:        store,
		Dial:         virt.Dial,
		BuildDomain:  BuildDomain(emulation),
		CloudInitISO: CloudInitISO,
		VMIs:         listers.NewVirtualMachineInstanceLister(vmiInformer.GetIndexer()),
		Pods:         podInformer.Lister(),
		UpdateStatus: func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) error {
			_, err := kv.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, vmi, metav1.UpdateOptions{})
			return err
		},
		GetSecret: func(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
			return kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		CreateOverlay:  CreateOverlay,
		TargetVMIs:     listers.NewVirtualMachineInstanceLister(targetInformer.GetIndexer()),
		Migration:      migration,
		PrepareNetwork: PrepareNetwork,
		DialGuest:      DialGuest,
		Event: func(vmi *kubevirtv1.VirtualMachineInstance, eventType, reason, message string) {
			recorder.Event(vmi, eventType, reason, message)
		},
	}
	if o.QEMUCapabilitiesDir != "" {
		agentCfg.SeedCapabilities = SeedCapabilities(qemucaps.Seeder{Dir: o.QEMUCapabilitiesDir})
	}
	a := agent.New(agentCfg)
	if err := a.AddEventHandlers(vmiInformer, podInformer.Informer()); err != nil {
		return err
	}
	if err := a.AddTargetEventHandlers(targetInformer); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 4)
	go vmiInformer.Run(ctx.Done())
	go targetInformer.Run(ctx.Done())
	podFactory.Start(ctx.Done())
	go func() {
		errs <- a.Run(ctx, o.Workers, vmiInformer.HasSynced, targetInformer.HasSynced, podInformer.Informer().HasSynced)
	}()

	hb := &heartbeat.Heartbeat{Client: kube, NodeName: o.NodeName, Emulation: emulation, Endpoint: endpoint,
		CPUModels: cpuModels(ctx, o.QEMUCapabilitiesDir, emulation)}
	go hb.Run(ctx)

	if tlsFiles != nil {
		srv, err := streamServer(o, tlsFiles, a.Backend())
		if err != nil {
			return err
		}
		logger.Info("Stream server listening", "address", srv.Addr, "advertised", hb.Endpoint)
		serveTLS(ctx, srv, "stream server", errs)
		if o.MetricsPort != 0 {
			srv, err := metricsServer(o, tlsFiles, kube, nodemetrics.NewCollector(o.NodeName, a.DomainStats))
			if err != nil {
				return err
			}
			logger.Info("Metrics served", "address", srv.Addr, "path", metricsserver.Path)
			serveTLS(ctx, srv, "metrics server", errs)
		}
	} else {
		logger.Info("No TLS files given: console, VNC, pause and metrics are not served on this node")
	}

	if o.DevicePlugins {
		dir := filepath.Join(o.KubeletRoot, "device-plugins")
		for _, p := range []*deviceplugin.Plugin{
			{ResourceName: deviceplugin.KVMResource, DevicePath: o.KVMDevice, Dir: dir},
			{ResourceName: deviceplugin.TUNResource, DevicePath: o.TUNDevice, Dir: dir},
		} {
			go func() { _ = p.Run(ctx) }()
		}
	}
	logger.Info("nativevirt-handler running", "node", o.NodeName, "emulation", emulation)
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		return err
	}
}

// cpuModels are the CPU models the node's QEMU offers guests (of its accelerator), from the
// capabilities the DaemonSet's probe wrote; none without them (guests that name a model are then
// not scheduled here).
func cpuModels(ctx context.Context, dir string, emulation bool) []string {
	if dir == "" {
		return nil
	}
	kind := launcherpod.QEMUCapabilitiesKVM
	if emulation {
		kind = launcherpod.QEMUCapabilitiesTCG
	}
	models, err := qemucaps.UsableCPUModels(dir, kind)
	if err != nil {
		klog.FromContext(ctx).Error(err, "No CPU models to label the node with: guests that name a CPU model will not be scheduled here")
		return nil
	}
	klog.FromContext(ctx).Info("CPU models for guests", "kind", kind, "models", models)
	return models
}

// serveTLS runs srv (its TLSConfig holds the certificate) until ctx ends; a failure goes to errs
// as what's.
func serveTLS(ctx context.Context, srv *http.Server, what string, errs chan<- error) {
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.ListenAndServeTLS("", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("%s: %w", what, err)
		}
	}()
}

// tlsFiles are the node CA and the agent's certificate and key, PEM.
type tlsFiles struct {
	ca, cert, key []byte
}

func readTLSFiles(o *Options) (*tlsFiles, error) {
	var f tlsFiles
	var err error
	if f.ca, err = os.ReadFile(o.ClientCAFile); err != nil {
		return nil, fmt.Errorf("--client-ca-file: %w", err)
	}
	if f.cert, err = os.ReadFile(o.TLSCertFile); err != nil {
		return nil, fmt.Errorf("--tls-cert-file: %w", err)
	}
	if f.key, err = os.ReadFile(o.TLSKeyFile); err != nil {
		return nil, fmt.Errorf("--tls-private-key-file: %w", err)
	}
	return &f, nil
}

// clientUsage reports whether the agent's certificate may authenticate a
// client (needed to open migration tunnels to other agents).
func (f *tlsFiles) clientUsage() bool {
	block, _ := pem.Decode(f.cert)
	if block == nil {
		return false
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return false
	}
	for _, u := range c.ExtKeyUsage {
		if u == x509.ExtKeyUsageClientAuth || u == x509.ExtKeyUsageAny {
			return true
		}
	}
	return false
}

// tunnelDialer opens migration tunnels to other node agents with this
// agent's certificate.
func tunnelDialer(f *tlsFiles) (func(context.Context, string, streams.MigrationTarget) (net.Conn, error), error) {
	cfg, err := streams.ClientTLSConfig(f.ca, f.cert, f.key)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, endpoint string, t streams.MigrationTarget) (net.Conn, error) {
		return streams.DialTunnel(ctx, endpoint, cfg, t)
	}, nil
}

// streamServer builds the mTLS stream server.
func streamServer(o *Options, f *tlsFiles, b streamserver.Backend) (*http.Server, error) {
	tlsConfig, err := streams.ServerTLSConfig(f.ca, f.cert, f.key)
	if err != nil {
		return nil, err
	}
	return &http.Server{
		Addr:              net.JoinHostPort(o.ListenAddress, strconv.Itoa(o.Port)),
		Handler:           streamserver.Handler(b),
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 30 * time.Second,
	}, nil
}

// metricsServer serves the VMIs' metrics with the agent's certificate to the callers that the
// cluster authenticates and allows to get /metrics (package metricsserver).
func metricsServer(o *Options, f *tlsFiles, kube kubernetes.Interface, c *nodemetrics.Collector) (*http.Server, error) {
	cert, err := tls.X509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, fmt.Errorf("the metrics server's certificate: %w", err)
	}
	return metricsserver.Server(net.JoinHostPort(o.ListenAddress, strconv.Itoa(o.MetricsPort)), cert, kube, c)
}

// nodeAddress is the node's InternalIP (else first address).
func nodeAddress(ctx context.Context, kube kubernetes.Interface, name string) (string, error) {
	n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading node %s: %w", name, err)
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address, nil
		}
	}
	if len(n.Status.Addresses) > 0 {
		return n.Status.Addresses[0].Address, nil
	}
	return "", fmt.Errorf("node %s has no address; set --advertise-address", name)
}
