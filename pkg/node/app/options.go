// Package app is the command line of nativevirt-handler, the node agent, as
// one chain like pkg/apiserver/app's: Options (flags, options.go) → Config
// (clients, informers, checkpoint, TLS files and the agent's configuration,
// config.go) → CompletedConfig (endpoint, migration tunnels, listen
// addresses, CPU models, device plugins) → Server (server.go), which runs the
// informers, the reconcile loop, the heartbeat, the stream and metrics servers
// and the device plugins.
package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/nativevirt/nativevirt/pkg/metricsserver"
	"github.com/nativevirt/nativevirt/pkg/node/agent"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// Emulation modes of --emulation.
const (
	EmulationAuto   = "auto"
	EmulationAlways = "always"
	EmulationNever  = "never"
)

// DefaultWorkers is how many VMIs the agent reconciles at once. Defining and
// starting a domain blocks a worker for up to seconds (libvirt probes QEMU on a
// launcher's first define); VMIs of one node live in separate launchers, so a
// burst of starts proceeds in parallel rather than two at a time (KubeVirt's
// virt-handler runs 10 as well).
const DefaultWorkers = 10

// DefaultQPS and DefaultBurst are the agent's client-side request limits, as
// the controller's. client-go's own (5 and 10) held the Running status writes
// of a burst of starts on one node back for seconds.
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// DefaultMetricsPort is the port of the metrics endpoint, beside the stream server's.
const DefaultMetricsPort = 8187

// Options are the flags of nativevirt-handler.
type Options struct {
	NodeName         string
	Kubeconfig       string
	KubeletRoot      string
	StateDir         string
	Emulation        string
	ListenAddress    string
	AdvertiseAddress string
	Port             int
	// MetricsPort serves the VMIs' metrics over HTTPS (0: not at all).
	MetricsPort  int
	TLSCertFile  string
	TLSKeyFile   string
	ClientCAFile string
	Workers      int
	// QPS and Burst limit the agent's requests to the API servers (status
	// writes of its VMIs, the node heartbeat).
	QPS           float32
	Burst         int
	DevicePlugins bool
	KVMDevice     string
	TUNDevice     string
	// MigrationProgressTimeout and MigrationCompletionTimeoutPerGiB bound
	// the live migrations this node sends.
	MigrationProgressTimeout         time.Duration
	MigrationCompletionTimeoutPerGiB time.Duration
	MigrationBandwidthMiB            uint64
	// QEMUCapabilitiesDir is where the DaemonSet's probe writes libvirt's QEMU capabilities
	// for this node (package qemucaps); "" disables seeding launchers with them.
	QEMUCapabilitiesDir string
}

// NewOptions returns the defaults; the node name defaults to $NODE_NAME and
// the advertised address to $NODE_IP (the downward API's status.hostIP).
func NewOptions() *Options {
	return &Options{
		NodeName:         os.Getenv("NODE_NAME"),
		AdvertiseAddress: os.Getenv("NODE_IP"),
		KubeletRoot:      "/var/lib/kubelet",
		StateDir:         "/var/lib/nativevirt/handler",
		Emulation:        EmulationAuto,
		ListenAddress:    "0.0.0.0",
		Port:             streams.DefaultPort,
		MetricsPort:      DefaultMetricsPort,
		Workers:          DefaultWorkers,
		QPS:              DefaultQPS,
		Burst:            DefaultBurst,
		DevicePlugins:    true,
		KVMDevice:        "/dev/kvm",
		TUNDevice:        "/dev/net/tun",
		// The probe writes into the agent's state directory: per node, like the checkpoints.
		QEMUCapabilitiesDir: "/var/lib/nativevirt/handler/qemu-capabilities",

		MigrationProgressTimeout:         agent.DefaultProgressTimeout,
		MigrationCompletionTimeoutPerGiB: agent.DefaultCompletionTimeoutPerGiB,
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "Name of this node (default $NODE_NAME).")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig file; in-cluster configuration when empty.")
	fs.StringVar(&o.KubeletRoot, "kubelet-root", o.KubeletRoot, "The kubelet's root directory (its --root-dir), where launcher pod volumes live.")
	fs.StringVar(&o.StateDir, "state-dir", o.StateDir, "Directory of the agent's domain checkpoints; keep it across restarts.")
	fs.StringVar(&o.Emulation, "emulation", o.Emulation, "Run guests under QEMU TCG emulation: auto (only when /dev/kvm is unusable), always or never.")
	fs.StringVar(&o.ListenAddress, "listen-address", o.ListenAddress, "Address the stream server listens on.")
	fs.StringVar(&o.AdvertiseAddress, "advertise-address", o.AdvertiseAddress, "Address the apiserver reaches the stream server at (default $NODE_IP).")
	fs.IntVar(&o.Port, "port", o.Port, "Port of the stream server.")
	fs.IntVar(&o.MetricsPort, "metrics-port", o.MetricsPort, "Port of the HTTPS endpoint "+metricsserver.Path+
		" with the VMIs' kubevirt_vmi_* metrics (with the --tls-cert-file certificate; callers need a bearer token allowed to get the non-resource URL "+
		metricsserver.Path+"); 0 disables it.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "PEM certificate of the stream server, signed by the node CA, CN "+streams.HandlerCommonName+
		"; it also authenticates this agent to other node agents for migration tunnels, so it needs both serverAuth and clientAuth usages.")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", o.TLSKeyFile, "PEM private key of --tls-cert-file.")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "PEM node CA; only its client certificates with CN "+streams.APIServerCommonName+
		" (VMI streams and commands) and "+streams.HandlerCommonName+" (migration tunnels from other node agents) are accepted.")
	fs.IntVar(&o.Workers, "workers", o.Workers, "VMIs reconciled in parallel (a start blocks its worker while libvirt defines and starts the domain).")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "Requests per second to the API servers.")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Request burst to the API servers.")
	fs.BoolVar(&o.DevicePlugins, "device-plugins", o.DevicePlugins, "Serve the kubelet device plugins devices.nativevirt.io/kvm and /tun.")
	fs.StringVar(&o.KVMDevice, "kvm-device", o.KVMDevice, "The KVM device node.")
	fs.StringVar(&o.TUNDevice, "tun-device", o.TUNDevice, "The TUN device node.")
	fs.StringVar(&o.QEMUCapabilitiesDir, "qemu-capabilities-dir", o.QEMUCapabilitiesDir,
		"Libvirt's QEMU capabilities probed on this node in the launcher image (nativevirt-launcher --probe-qemu-capabilities), given to each launcher before its first define; empty: every launcher probes QEMU itself.")
	fs.DurationVar(&o.MigrationProgressTimeout, "migration-progress-timeout", o.MigrationProgressTimeout,
		"Abort a live migration from this node when the data left to transfer did not shrink for this long.")
	fs.DurationVar(&o.MigrationCompletionTimeoutPerGiB, "migration-completion-timeout-per-gib", o.MigrationCompletionTimeoutPerGiB,
		"Abort a live migration from this node that takes longer than this per GiB of guest memory (at least one GiB's worth).")
	fs.Uint64Var(&o.MigrationBandwidthMiB, "migration-bandwidth-mib", o.MigrationBandwidthMiB,
		"Cap each live migration from this node at this many MiB/s; 0 leaves it unlimited.")
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	if o.NodeName == "" {
		errs = append(errs, errors.New("--node-name (or $NODE_NAME) is required"))
	}
	switch o.Emulation {
	case EmulationAuto, EmulationAlways, EmulationNever:
	default:
		errs = append(errs, fmt.Errorf("--emulation must be auto, always or never, not %q", o.Emulation))
	}
	if !filepath.IsAbs(o.KubeletRoot) || !filepath.IsAbs(o.StateDir) {
		errs = append(errs, errors.New("--kubelet-root and --state-dir must be absolute paths"))
	}
	if o.QEMUCapabilitiesDir != "" && !filepath.IsAbs(o.QEMUCapabilitiesDir) {
		errs = append(errs, fmt.Errorf("--qemu-capabilities-dir must be an absolute path, not %q", o.QEMUCapabilitiesDir))
	}
	if o.Port <= 0 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("--port %d is out of range", o.Port))
	}
	if o.MetricsPort < 0 || o.MetricsPort > 65535 || o.MetricsPort == o.Port {
		errs = append(errs, fmt.Errorf("--metrics-port %d is out of range or the stream server's", o.MetricsPort))
	}
	if o.MigrationProgressTimeout <= 0 || o.MigrationCompletionTimeoutPerGiB <= 0 {
		errs = append(errs, errors.New("--migration-progress-timeout and --migration-completion-timeout-per-gib must be positive"))
	}
	if o.Workers < 1 {
		errs = append(errs, errors.New("--workers must be at least 1"))
	}
	if o.QPS <= 0 || o.Burst < 1 {
		errs = append(errs, errors.New("--kube-api-qps and --kube-api-burst must be positive"))
	}
	tls := 0
	for _, f := range []string{o.TLSCertFile, o.TLSKeyFile, o.ClientCAFile} {
		if f != "" {
			tls++
		}
	}
	if tls != 0 && tls != 3 {
		errs = append(errs, errors.New("--tls-cert-file, --tls-private-key-file and --client-ca-file go together"))
	}
	return errors.Join(errs...)
}

// emulate resolves --emulation: auto emulates unless the KVM device opens.
func (o *Options) emulate() bool {
	switch o.Emulation {
	case EmulationAlways:
		return true
	case EmulationNever:
		return false
	}
	f, err := os.OpenFile(o.KVMDevice, os.O_RDWR, 0)
	if err != nil {
		return true
	}
	_ = f.Close()
	return false
}

// endpoint is the host:port published on the Node.
func (o *Options) endpoint(fallbackHost string) string {
	host := o.AdvertiseAddress
	if host == "" {
		host = fallbackHost
	}
	return net.JoinHostPort(host, strconv.Itoa(o.Port))
}

// clientConfig applies the request limits and the agent's user agent to cfg.
func (o *Options) clientConfig(cfg *rest.Config) *rest.Config {
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	cfg.UserAgent = "nativevirt-handler"
	return cfg
}
