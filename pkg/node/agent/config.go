package agent

import (
	"context"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/clock"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	listers "github.com/nativevirt/nativevirt/pkg/client/listers/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/domains"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// DomainFacts are what the agent found out locally that the domain XML needs.
type DomainFacts struct {
	// DiskFormats maps the names of file-backed volumes found in the disks
	// volume (containerDisk images) to their format, "raw" or "qcow2".
	DiskFormats map[string]string
	// BlockVolumes names the claim volumes the launcher pod attaches as block
	// devices (/dev/<volume>) instead of mounting a filesystem.
	BlockVolumes map[string]bool
	// SharedVolumes names its ReadWriteMany claim volumes (other nodes attach
	// the same data; a live migration leaves them in place).
	SharedVolumes map[string]bool
}

// BuildDomainFunc converts a VMI into its libvirt domain name and XML.
type BuildDomainFunc func(vmi *kubevirtv1.VirtualMachineInstance, facts DomainFacts) (name string, xml []byte, err error)

// CloudInitKind says which cloud-init data source an ISO is for.
type CloudInitKind string

// Cloud-init data sources.
const (
	// NoCloud: volume label cidata, files user-data, meta-data, network-config.
	NoCloud CloudInitKind = "NoCloud"
	// ConfigDrive: volume label config-2, OpenStack layout.
	ConfigDrive CloudInitKind = "ConfigDrive"
)

// CloudInitData is the resolved content of a cloud-init volume.
type CloudInitData struct {
	// UserData and NetworkData are the volume's (from the spec or its secrets).
	UserData, NetworkData []byte
	// PublicKeys are the SSH public keys of the instance's accessCredentials that propagate
	// through this kind of volume, by name: the meta-data's public keys.
	PublicKeys map[string]string
}

// CloudInitISOFunc renders the cloud-init ISO image of a VMI (with its
// instance metadata) from the resolved data.
type CloudInitISOFunc func(kind CloudInitKind, vmi *kubevirtv1.VirtualMachineInstance, data CloudInitData) ([]byte, error)

// Config is everything the agent depends on; function fields keep the
// reconcile logic testable without a cluster or libvirt.
type Config struct {
	// NodeName is this node.
	NodeName string
	// Locator finds launcher pod volumes under the kubelet root.
	Locator podfs.Locator
	// Store is the domain checkpoint.
	Store *domains.Store
	// Dial connects to a launcher's libvirt daemon.
	Dial virt.DialFunc
	// BuildDomain converts a VMI into domain XML.
	BuildDomain BuildDomainFunc
	// CloudInitISO renders cloud-init ISOs.
	CloudInitISO CloudInitISOFunc
	// PrepareNetwork prepares the pod network in a launcher pod before the
	// domain is defined there (nil: nothing to prepare).
	PrepareNetwork PrepareNetworkFunc
	// DialGuest connects to a port of the guest from inside a launcher pod (nil: port
	// forwarding is not available on this node).
	DialGuest DialGuestFunc
	// SeedCapabilities gives a launcher the node's QEMU capabilities before the first define
	// (nil: libvirt probes QEMU in every launcher pod).
	SeedCapabilities SeedCapabilitiesFunc
	// VMIs lists the VMIs of this node.
	VMIs listers.VirtualMachineInstanceLister
	// Pods lists the launcher pods of this node and the attachment pods of hotplugged volumes.
	Pods corelisters.PodLister
	// ContainerRoot finds the root directory of a pod's container that shows a path (the
	// attachment pod's claim); nil: the node's /proc (podfs.ProcRoots).
	ContainerRoot func(podUID types.UID, probe string) (string, error)
	// UpdateStatus writes a VMI's status subresource.
	UpdateStatus func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) error
	// GetSecret reads a Secret (cloud-init secretRef).
	GetSecret func(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// CreateOverlay creates the qcow2 image overlay backed by backing (both
	// host paths; the backing file is recorded by its base name, relative to
	// the overlay) in backingFormat, raw or qcow2.
	CreateOverlay func(overlay, backing, backingFormat string) error
	// TargetVMIs lists the VMIs whose migration target is this node (label
	// kubevirt.io/migrationTargetNodeName); nil: this node is never a target.
	TargetVMIs listers.VirtualMachineInstanceLister
	// Migration configures live migration.
	Migration MigrationConfig
	// Event records an event on a VMI (nil: no events).
	Event func(vmi *kubevirtv1.VirtualMachineInstance, eventType, reason, message string)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Timers runs the agent's timers, such as the automatic thaw of a freeze (the real clock
	// when nil; tests step a fake one).
	Timers clock.WithDelayedExecution
}

// MigrationConfig configures both ends of live migrations.
type MigrationConfig struct {
	// Endpoint is this agent's stream endpoint ("host:port") as other node
	// agents reach it; empty disables migrations to this node.
	Endpoint string
	// DialTunnel opens a migration tunnel to the target agent at endpoint;
	// nil disables migrations from this node.
	DialTunnel func(ctx context.Context, endpoint string, t streams.MigrationTarget) (net.Conn, error)
	// ProgressTimeout aborts a migration whose remaining data did not shrink
	// for that long (DefaultProgressTimeout when zero).
	ProgressTimeout time.Duration
	// CompletionTimeoutPerGiB bounds a migration's duration per GiB of guest
	// memory, at least one GiB's worth (DefaultCompletionTimeoutPerGiB when zero).
	CompletionTimeoutPerGiB time.Duration
	// ConfirmTimeout is how long the source waits, once its guest is gone or
	// paused by a migration, for the target agent to report the guest
	// running before it declares the migration failed (DefaultConfirmTimeout
	// when zero).
	ConfirmTimeout time.Duration
	// Poll is how often a running migration's progress is checked (one
	// second when zero).
	Poll time.Duration
	// BandwidthMiB caps each migration from this node in MiB/s; 0 leaves it
	// unlimited.
	BandwidthMiB uint64
}

// Migration defaults (KubeVirt's timeouts).
const (
	DefaultProgressTimeout         = 150 * time.Second
	DefaultCompletionTimeoutPerGiB = 150 * time.Second
	DefaultConfirmTimeout          = 2 * time.Minute
)

// withDefaults fills in the clock and the migration timeouts left zero.
func (cfg Config) withDefaults() Config {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Timers == nil {
		cfg.Timers = clock.RealClock{}
	}
	m := &cfg.Migration
	if m.ProgressTimeout <= 0 {
		m.ProgressTimeout = DefaultProgressTimeout
	}
	if m.CompletionTimeoutPerGiB <= 0 {
		m.CompletionTimeoutPerGiB = DefaultCompletionTimeoutPerGiB
	}
	if m.ConfirmTimeout <= 0 {
		m.ConfirmTimeout = DefaultConfirmTimeout
	}
	if m.Poll <= 0 {
		m.Poll = time.Second
	}
	return cfg
}

// containerRoot is ContainerRoot or the node's /proc.
func (cfg Config) containerRoot() func(podUID types.UID, probe string) (string, error) {
	if cfg.ContainerRoot != nil {
		return cfg.ContainerRoot
	}
	return podfs.ProcRoots{}.ContainerRoot
}
