package app

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

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
	"github.com/nativevirt/nativevirt/pkg/node/agent"
	"github.com/nativevirt/nativevirt/pkg/node/deviceplugin"
	"github.com/nativevirt/nativevirt/pkg/node/domains"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/qemucaps"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// informerResync re-delivers every VMI periodically: the agent's resync of
// domain state and guest OS info.
const informerResync = 30 * time.Second

// Config is what the node agent runs with, built from validated Options: the
// clients, the informers, the TLS material and the agent's configuration.
// Nothing runs yet.
type Config struct {
	// NodeName is this node.
	NodeName string
	// Workers is how many VMIs the agent reconciles at once.
	Workers int
	// Emulation says whether guests run under QEMU TCG.
	Emulation bool
	// HostIP is the node's address as the Node reports it ("" when unknown).
	HostIP string
	// Kube and KubeVirt are the API clients.
	Kube     kubernetes.Interface
	KubeVirt versioned.Interface
	// VMIs are the VMIs of this node; TargetVMIs the VMIs migrating to it,
	// before their handover; Pods its launcher pods.
	VMIs, TargetVMIs cache.SharedIndexInformer
	Pods             kubeinformers.SharedInformerFactory
	// Store is the domain checkpoint.
	Store *domains.Store
	// TLS is the node CA and the agent's certificate (nil: no stream or metrics server).
	TLS *tlsFiles
	// Agent is the reconcile loop's configuration; Complete adds the
	// migration endpoint and tunnels and the event recorder.
	Agent agent.Config

	options *Options
}

// Config builds the configuration from validated options: the API clients,
// the informers (not started), the domain checkpoint and the TLS files.
func (o *Options) Config(ctx context.Context) (*Config, error) {
	rc, err := cmdutil.RESTConfig(o.Kubeconfig)
	if err != nil {
		return nil, err
	}
	rc = o.clientConfig(rc)
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	kv, err := versioned.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	store, err := domains.Open(filepath.Join(o.StateDir, "domains"))
	if err != nil {
		return nil, err
	}
	hostIP, err := nodeAddress(ctx, kube, o.NodeName)
	if err != nil && o.AdvertiseAddress == "" {
		return nil, err
	}
	c := &Config{
		NodeName: o.NodeName, Workers: o.Workers, Emulation: o.emulate(), HostIP: hostIP,
		Kube: kube, KubeVirt: kv, Store: store, options: o,
	}
	c.informers()
	if o.TLSCertFile != "" {
		if c.TLS, err = readTLSFiles(o); err != nil {
			return nil, err
		}
	}
	c.Agent = c.agentConfig()
	return c, nil
}

// informers creates the informers of the VMIs and pods of this node.
func (c *Config) informers() {
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	node := c.NodeName
	c.VMIs = vmiinformers.NewFilteredVirtualMachineInstanceInformer(c.KubeVirt, metav1.NamespaceAll, informerResync, indexers,
		func(opts *metav1.ListOptions) {
			opts.FieldSelector = fields.OneTermEqualSelector("status.nodeName", node).String()
		})
	c.TargetVMIs = vmiinformers.NewFilteredVirtualMachineInstanceInformer(c.KubeVirt, metav1.NamespaceAll, informerResync, indexers,
		func(opts *metav1.ListOptions) {
			opts.LabelSelector = labels.SelectorFromSet(labels.Set{kubevirtv1.MigrationTargetNodeNameLabel: node}).String()
		})
	c.Pods = kubeinformers.NewSharedInformerFactoryWithOptions(c.Kube, 0, kubeinformers.WithTweakListOptions(func(opts *metav1.ListOptions) {
		opts.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", node).String()
		// Launcher pods and the attachment pods of hotplugged volumes.
		opts.LabelSelector = kubevirtv1.AppLabel + " in (" + launcherpod.LauncherLabelValue + "," + launcherpod.HotplugLabelValue + ")"
	}))
}

// agentConfig is the reconcile loop's configuration on the clients and informers.
func (c *Config) agentConfig() agent.Config {
	o, kube, kv := c.options, c.Kube, c.KubeVirt
	cfg := agent.Config{
		NodeName:     c.NodeName,
		Locator:      podfs.Locator{KubeletRoot: o.KubeletRoot},
		Store:        c.Store,
		Dial:         virt.Dial,
		BuildDomain:  BuildDomain(c.Emulation),
		CloudInitISO: CloudInitISO,
		VMIs:         listers.NewVirtualMachineInstanceLister(c.VMIs.GetIndexer()),
		Pods:         c.Pods.Core().V1().Pods().Lister(),
		UpdateStatus: func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) error {
			_, err := kv.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, vmi, metav1.UpdateOptions{})
			return err
		},
		GetSecret: func(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
			return kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		CreateOverlay:  CreateOverlay,
		TargetVMIs:     listers.NewVirtualMachineInstanceLister(c.TargetVMIs.GetIndexer()),
		PrepareNetwork: PrepareNetwork,
		DialGuest:      DialGuest,
		Migration: agent.MigrationConfig{
			ProgressTimeout:         o.MigrationProgressTimeout,
			CompletionTimeoutPerGiB: o.MigrationCompletionTimeoutPerGiB,
			BandwidthMiB:            o.MigrationBandwidthMiB,
		},
	}
	if o.QEMUCapabilitiesDir != "" {
		cfg.SeedCapabilities = SeedCapabilities(qemucaps.Seeder{Dir: o.QEMUCapabilitiesDir})
	}
	return cfg
}

// completedConfig is a Config whose derived parts are filled in.
type completedConfig struct {
	*Config
	// Endpoint is the stream server's host:port as the apiserver and other
	// node agents reach it.
	Endpoint string
	// StreamAddress and MetricsAddress are where the servers listen
	// (MetricsAddress "": no metrics server).
	StreamAddress, MetricsAddress string
	// CPUModels are the CPU models QEMU offers guests on this node.
	CPUModels []string
	// DevicePlugins are the kubelet device plugins to serve (none when disabled).
	DevicePlugins []*deviceplugin.Plugin
}

// CompletedConfig is a Config ready for New; only Complete makes one.
type CompletedConfig struct {
	*completedConfig
}

// Complete fills in what follows from the configuration: the advertised
// endpoint, the migration tunnels (with TLS), the listen addresses, the CPU
// models and the device plugins.
func (c *Config) Complete(ctx context.Context) (CompletedConfig, error) {
	o := c.options
	cc := &completedConfig{
		Config:        c,
		Endpoint:      o.endpoint(c.HostIP),
		StreamAddress: net.JoinHostPort(o.ListenAddress, strconv.Itoa(o.Port)),
		CPUModels:     cpuModels(ctx, o.QEMUCapabilitiesDir, c.Emulation),
	}
	if c.TLS != nil {
		dial, err := tunnelDialer(c.TLS)
		if err != nil {
			return CompletedConfig{}, fmt.Errorf("the migration tunnels' TLS: %w", err)
		}
		if !c.TLS.clientUsage() {
			klog.FromContext(ctx).Info("The node agent certificate has no clientAuth usage: migrations FROM this node will be refused by the target agents", "file", o.TLSCertFile)
		}
		c.Agent.Migration.Endpoint, c.Agent.Migration.DialTunnel = cc.Endpoint, dial
		if o.MetricsPort != 0 {
			cc.MetricsAddress = net.JoinHostPort(o.ListenAddress, strconv.Itoa(o.MetricsPort))
		}
	}
	if o.DevicePlugins {
		dir := filepath.Join(o.KubeletRoot, "device-plugins")
		cc.DevicePlugins = []*deviceplugin.Plugin{
			{ResourceName: deviceplugin.KVMResource, DevicePath: o.KVMDevice, Dir: dir},
			{ResourceName: deviceplugin.TUNResource, DevicePath: o.TUNDevice, Dir: dir},
		}
	}
	return CompletedConfig{cc}, nil
}
