// Package app is the command line of nativevirt-controller, as one chain like pkg/apiserver/app's:
// Options (flags, options.go) → Config (clients and settings, config.go) → CompletedConfig →
// Server (server.go: the metrics and health endpoints and leader election on a Lease, so that two
// replicas can run and only one acts), which runs the Controllers (controllers.go: the informers,
// the VM, VMI, replica set, migration and node heartbeat controllers and their event recorders).
package app

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/nativevirt/nativevirt/pkg/controllers/migration"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/metricsserver"
)

// serviceAccountNamespaceFile holds the pod's namespace inside a cluster.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Options are the flags of nativevirt-controller.
type Options struct {
	// Kubeconfig is the kubeconfig file; in-cluster configuration when empty.
	Kubeconfig string
	// LauncherImage runs the launcher pods.
	LauncherImage string
	// LauncherPullPolicy is the launcher image's pull policy.
	LauncherPullPolicy string
	// UseEmulation makes launcher pods ask for no KVM device (guests run under QEMU TCG).
	UseEmulation bool
	// CPUAllocationRatio sizes the CPU request of launcher pods whose VMI names none: vCPUs ×
	// 1000m / ratio (KubeVirt's developerConfiguration.cpuAllocationRatio).
	CPUAllocationRatio int
	// Workers is the number of workers of each controller.
	Workers int
	// LeaderElect runs the controllers only while holding the Lease.
	LeaderElect bool
	// LeaderElectNamespace holds the Lease; the pod's namespace by default.
	LeaderElectNamespace string
	// LeaderElectName is the Lease's name.
	LeaderElectName string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election as in kube-controller-manager.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// HealthAddr serves /healthz and /readyz; empty disables it.
	HealthAddr string
	// MetricsAddr serves the VM and VMI metrics over HTTPS; empty disables it.
	MetricsAddr string
	// QPS and Burst limit the client's request rate.
	QPS   float32
	Burst int
	// Migration holds the live migration limits and timeouts.
	Migration migration.Config
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		LauncherImage:        launcherpod.DefaultLauncherImage,
		LauncherPullPolicy:   string(corev1.PullIfNotPresent),
		CPUAllocationRatio:   launcherpod.DefaultCPUAllocationRatio,
		Workers:              3,
		LeaderElect:          true,
		LeaderElectNamespace: defaultNamespace(),
		LeaderElectName:      "nativevirt-controller",
		LeaseDuration:        15 * time.Second,
		RenewDeadline:        10 * time.Second,
		RetryPeriod:          2 * time.Second,
		HealthAddr:           ":8080",
		MetricsAddr:          ":8443",
		QPS:                  50,
		Burst:                100,
		Migration:            migration.DefaultConfig(),
	}
}

// defaultNamespace is the pod's namespace: POD_NAMESPACE, else the service account's, else
// "nativevirt".
func defaultNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if raw, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
		if ns := strings.TrimSpace(string(raw)); ns != "" {
			return ns
		}
	}
	return "nativevirt"
}

// AddFlags adds the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig file; in-cluster configuration when empty.")
	fs.StringVar(&o.LauncherImage, "launcher-image", o.LauncherImage, "Image of the launcher pods (nativevirt-launcher, libvirt, QEMU).")
	fs.StringVar(&o.LauncherPullPolicy, "launcher-pull-policy", o.LauncherPullPolicy, "Pull policy of the launcher image: Always, IfNotPresent or Never.")
	fs.BoolVar(&o.UseEmulation, "use-emulation", o.UseEmulation,
		"Run guests under QEMU TCG: launcher pods request no "+launcherpod.KVMResource+" device.")
	fs.IntVar(&o.CPUAllocationRatio, "cpu-allocation-ratio", o.CPUAllocationRatio,
		"A launcher pod whose VMI requests no CPU requests vCPUs × 1000m / this ratio (KubeVirt's cpuAllocationRatio); at least 1.")
	fs.IntVar(&o.Workers, "workers", o.Workers, "Concurrent syncs per controller.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Act only while holding the leader Lease, so that several replicas can run.")
	fs.StringVar(&o.LeaderElectNamespace, "leader-elect-namespace", o.LeaderElectNamespace, "Namespace of the leader Lease (default: the pod's).")
	fs.StringVar(&o.LeaderElectName, "leader-elect-name", o.LeaderElectName, "Name of the leader Lease.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "How long a non-leader waits before taking an unrenewed Lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "How long the leader retries renewing before it gives up leading.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "Interval between attempts to acquire or renew the Lease.")
	fs.StringVar(&o.HealthAddr, "health-addr", o.HealthAddr, "Address serving /healthz and /readyz; empty disables it.")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", o.MetricsAddr, "Address of the HTTPS endpoint "+metricsserver.Path+
		" with kubevirt_vmi_phase_count and kubevirt_vm_info (a self-signed certificate; callers need a bearer token allowed to get "+
		metricsserver.Path+"); empty disables it.")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "Requests per second to the API servers.")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Request burst to the API servers.")
	fs.IntVar(&o.Migration.ParallelMigrationsPerCluster, "parallel-migrations-per-cluster", o.Migration.ParallelMigrationsPerCluster,
		"Live migrations that may run at once in the cluster; more wait in phase Pending.")
	fs.IntVar(&o.Migration.ParallelOutboundMigrationsPerNode, "parallel-outbound-migrations-per-node", o.Migration.ParallelOutboundMigrationsPerNode,
		"Live migrations that may leave one node at once; more wait in phase Pending.")
	fs.DurationVar(&o.Migration.UnschedulableTimeout, "migration-unschedulable-timeout", o.Migration.UnschedulableTimeout,
		"A migration whose target pod the scheduler cannot place fails after this long.")
	fs.DurationVar(&o.Migration.PendingTimeout, "migration-pending-timeout", o.Migration.PendingTimeout,
		"A migration whose target pod stays Pending (for any reason) fails after this long.")
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	if o.LauncherImage == "" {
		errs = append(errs, errors.New("--launcher-image must not be empty"))
	}
	switch corev1.PullPolicy(o.LauncherPullPolicy) {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		errs = append(errs, errors.New("--launcher-pull-policy must be Always, IfNotPresent or Never"))
	}
	if o.CPUAllocationRatio < 1 {
		errs = append(errs, fmt.Errorf("--cpu-allocation-ratio must be at least 1, not %d", o.CPUAllocationRatio))
	}
	if o.Workers < 1 {
		errs = append(errs, errors.New("--workers must be at least 1"))
	}
	if o.Migration.ParallelMigrationsPerCluster < 1 {
		errs = append(errs, errors.New("--parallel-migrations-per-cluster must be at least 1"))
	}
	if o.Migration.ParallelOutboundMigrationsPerNode < 1 {
		errs = append(errs, errors.New("--parallel-outbound-migrations-per-node must be at least 1"))
	}
	if o.Migration.UnschedulableTimeout <= 0 || o.Migration.PendingTimeout <= 0 {
		errs = append(errs, errors.New("--migration-unschedulable-timeout and --migration-pending-timeout must be positive"))
	}
	if o.LeaderElect {
		if o.LeaderElectNamespace == "" || o.LeaderElectName == "" {
			errs = append(errs, errors.New("--leader-elect needs --leader-elect-namespace and --leader-elect-name"))
		}
		if o.LeaseDuration <= o.RenewDeadline || o.RenewDeadline <= o.RetryPeriod || o.RetryPeriod <= 0 {
			errs = append(errs, errors.New("leader election needs lease duration > renew deadline > retry period > 0"))
		}
	}
	return errors.Join(errs...)
}

// launcherConfig is the launcher pod configuration the options select.
func (o *Options) launcherConfig() launcherpod.Config {
	return launcherpod.Config{
		LauncherImage:      o.LauncherImage,
		LauncherPullPolicy: corev1.PullPolicy(o.LauncherPullPolicy),
		UseEmulation:       o.UseEmulation,
		CPUAllocationRatio: o.CPUAllocationRatio,
	}
}
