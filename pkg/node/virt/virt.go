// Package virt is the node agent's small view of libvirt: one connection to
// the libvirt daemon of one launcher pod, the lifecycle calls the agent makes
// on the single domain that daemon runs, and the observations it needs
// (state, guest OS, console stream, lifecycle events).
//
// The interfaces are deliberately narrow (KubeVirt's 40-method DomainManager is
// the counter-example) so that the reconcile logic can be tested against the
// in-memory fake in package virt/fake, while the real implementation on
// libvirt.org/go/libvirt (cgo) lives in libvirt.go. A Conn is a struct of
// them, not one wide interface: each implementation has one small type per
// part over a shared connection.
package virt

import (
	"errors"
	"io"
	"time"
)

// ErrNotFound is returned (wrapped) when the named domain does not exist.
var ErrNotFound = errors.New("domain not found")

// ErrNoGuestAgent is returned (wrapped) by GuestOS when the guest runs no
// guest agent (or it does not answer).
var ErrNoGuestAgent = errors.New("guest agent not connected")

// State is the coarse state of a domain, as libvirt reports it.
type State string

// Domain states (libvirt's virDomainState).
const (
	// StateNoState: libvirt does not know (transient).
	StateNoState State = "NoState"
	// StateRunning: the guest's vCPUs run.
	StateRunning State = "Running"
	// StateBlocked: the guest is blocked on a resource (counts as running).
	StateBlocked State = "Blocked"
	// StatePaused: the guest's vCPUs are paused.
	StatePaused State = "Paused"
	// StateShuttingDown: the guest is shutting down.
	StateShuttingDown State = "ShuttingDown"
	// StateShutoff: QEMU is not running; the domain is only defined.
	StateShutoff State = "Shutoff"
	// StateCrashed: the guest crashed.
	StateCrashed State = "Crashed"
	// StatePMSuspended: the guest suspended itself (S3/S4).
	StatePMSuspended State = "PMSuspended"
)

// Reason says why a domain is in its state. Only the reasons the agent acts
// on are distinguished; everything else is ReasonUnknown.
type Reason string

// Domain state reasons.
const (
	// ReasonUnknown: a reason the agent does not distinguish.
	ReasonUnknown Reason = "Unknown"
	// ReasonShutdown: shut off because the guest powered itself off.
	ReasonShutdown Reason = "Shutdown"
	// ReasonDestroyed: shut off because it was destroyed (killed) on request.
	ReasonDestroyed Reason = "Destroyed"
	// ReasonCrashed: shut off or crashed because the guest or QEMU crashed.
	ReasonCrashed Reason = "Crashed"
	// ReasonFailed: shut off because QEMU failed to start or died.
	ReasonFailed Reason = "Failed"
	// ReasonUser: paused on request.
	ReasonUser Reason = "User"
	// ReasonIOError: paused because of a disk I/O error.
	ReasonIOError Reason = "IOError"
	// ReasonMigration: paused by a migration: the incoming domain on the
	// target before it takes over, or the source after a migration whose
	// outcome libvirt could not confirm.
	ReasonMigration Reason = "Migration"
	// ReasonMigrated: running on the target after an incoming migration.
	ReasonMigrated Reason = "Migrated"
	// ReasonStartingUp: paused while QEMU starts (also an incoming domain).
	ReasonStartingUp Reason = "StartingUp"
)

// DomainInfo is what the agent observes of one domain.
type DomainInfo struct {
	// Name of the domain (<namespace>_<name>).
	Name string
	// State of the domain.
	State State
	// Reason for the state.
	Reason Reason
	// UID is the VMI uid recorded in the domain's metadata, "" when absent.
	UID string
}

// Active reports whether QEMU runs for the domain (running, blocked, paused,
// shutting down or PM-suspended).
func (i DomainInfo) Active() bool {
	switch i.State {
	case StateRunning, StateBlocked, StatePaused, StateShuttingDown, StatePMSuspended:
		return true
	}
	return false
}

// GuestOS is the guest's operating system as its guest agent reports it.
type GuestOS struct {
	// ID of the OS (e.g. debian).
	ID string
	// Name of the OS.
	Name string
	// PrettyName of the OS.
	PrettyName string
	// Version of the OS.
	Version string
	// VersionID of the OS.
	VersionID string
	// KernelRelease of the guest kernel.
	KernelRelease string
	// KernelVersion of the guest kernel.
	KernelVersion string
	// Machine is the hardware platform (e.g. x86_64).
	Machine string
}

// GuestInfo is what the guest agent reports about the running guest.
type GuestInfo struct {
	OS       GuestOS
	Hostname string
	// TimezoneName and TimezoneOffset (seconds east of UTC) are the guest's time zone.
	TimezoneName   string
	TimezoneOffset int
	Users          []GuestUser
	FileSystems    []GuestFileSystem
	// AgentVersion and Commands are the guest agent's own answer to guest-info; FSFreezeStatus
	// its answer to guest-fsfreeze-status ("thawed", "frozen"). Empty when it gave none.
	AgentVersion   string
	Commands       []GuestAgentCommand
	FSFreezeStatus string
}

// GuestAgentCommand is a command the guest agent offers.
type GuestAgentCommand struct {
	Name    string
	Enabled bool
}

// GuestUser is a user logged in to the guest.
type GuestUser struct {
	Name, Domain string
	// LoginTime is when the user logged in, in milliseconds since the epoch (0: unknown).
	LoginTime uint64
}

// GuestFileSystem is a mounted file system of the guest.
type GuestFileSystem struct {
	// Name is the guest's device name (e.g. sda1).
	Name, MountPoint, Type string
	UsedBytes, TotalBytes  uint64
	// DiskSerials are the serial numbers of the disks it lives on, as far as the guest knows them.
	DiskSerials []string
}

// Event tells that something about a domain changed; the receiver re-reads
// the state it cares about. Closed is set once when the connection to the
// libvirt daemon is lost (the launcher died); no events follow it.
type Event struct {
	// Domain is the name of the domain the event is about ("" when Closed).
	Domain string
	// Closed is true when the connection was closed.
	Closed bool
	// GuestAgent is true when the event is the guest agent connecting or disconnecting: what
	// it reports may have changed.
	GuestAgent bool
}

// Lifecycle changes a domain. Every call names the domain; calls on a missing
// domain fail with an error wrapping ErrNotFound.
type Lifecycle interface {
	// Define creates or replaces the persistent definition from domain XML.
	Define(xml []byte) error
	// Start boots a defined domain; paused starts QEMU with the vCPUs paused (libvirt
	// reports the domain paused by the user), for the VMI's startStrategy Paused.
	Start(name string, paused bool) error
	// Shutdown asks the guest to power off (ACPI power button).
	Shutdown(name string) error
	// Destroy kills QEMU at once.
	Destroy(name string) error
	// Undefine removes the definition of a shut off domain.
	Undefine(name string) error
	// Pause stops the guest's vCPUs.
	Pause(name string) error
	// Resume restarts paused vCPUs.
	Resume(name string) error
	// Reboot asks the guest to reboot (guest agent or ACPI).
	Reboot(name string) error
}

// Inspector observes domains.
type Inspector interface {
	// Info returns the domain's state.
	Info(name string) (DomainInfo, error)
	// GuestOS asks the guest agent about the OS; ErrNoGuestAgent without one.
	GuestOS(name string) (GuestOS, error)
	// GuestInfo asks the guest agent about the OS, host name, time zone, users and file
	// systems; ErrNoGuestAgent without one.
	GuestInfo(name string) (GuestInfo, error)
	// GuestInterfaces asks the guest agent for the guest's network interfaces; ErrNoGuestAgent
	// without one.
	GuestInterfaces(name string) ([]GuestInterface, error)
	// Details reads facts of the running domain (machine type, CPU topology, memory, disk
	// targets).
	Details(name string) (DomainDetails, error)
	// Stats reads the running domain's counters (CPU, memory, interfaces, disks).
	Stats(name string) (DomainStats, error)
	// Screenshot returns the image of the domain's first screen and its MIME type (QEMU's
	// is image/x-portable-pixmap).
	Screenshot(name string) (mime string, data []byte, err error)
	// OpenConsole opens the domain's serial console as a byte stream,
	// taking it over from any other holder. Close ends the stream.
	OpenConsole(name string) (io.ReadWriteCloser, error)
	// Watch calls fn for every lifecycle event until stop is called. fn must
	// not block for long: it runs on libvirt's event loop.
	Watch(fn func(Event)) (stop func(), err error)
}

// Migrator live-migrates a domain to another launcher's libvirt daemon.
type Migrator interface {
	// Migrate moves the domain as MigrateParams say and returns when the
	// migration ended: nil once the destination runs the guest and the
	// source domain is gone (undefined); an error wrapping ErrAborted when
	// AbortJob cancelled it; another error when it failed.
	Migrate(name string, p MigrateParams) error
	// JobStats reports the domain's current job, or with completed the last
	// completed one (on a migration's destination: the incoming migration,
	// with its downtime).
	JobStats(name string, completed bool) (JobStats, error)
	// AbortJob cancels the domain's current job (a running migration).
	AbortJob(name string) error
}

// ErrAborted is returned (wrapped) by Migrate when the migration was aborted.
var ErrAborted = errors.New("migration aborted")

// MigrateParams say where a migration goes and what it copies. Every path and
// URI is as the SOURCE libvirt daemon and QEMU see them (inside their pod).
type MigrateParams struct {
	// DestURI is the libvirt connection URI of the destination daemon.
	DestURI string
	// MigrationURI is where QEMU sends the migration stream (unix://...).
	MigrationURI string
	// DisksURI is the destination's NBD server for block migration (unix://...).
	DisksURI string
	// CopyDisksUnder block-migrates the writable disks whose source file lies
	// in this directory (local images: the destination holds copies of their
	// backing images, so only the top image is copied). Read-only disks and
	// disks elsewhere (shared storage) are not copied.
	CopyDisksUnder string
	// BandwidthMiB caps the transfer in MiB/s; 0 leaves it unlimited.
	BandwidthMiB uint64
	// SharedDisks: some writable disks are on ReadWriteMany claims, which the
	// destination attaches itself. libvirt trusts only network filesystems it
	// knows to be shared and refuses the rest ("Migration without shared
	// storage is unsafe"); the claim's access mode is the promise here, and the
	// converter gives those disks cache none, which is what makes the
	// hand-over consistent. So the migration is flagged unsafe (as KubeVirt's
	// unsafe migration override does).
	SharedDisks bool
}

// JobStats is the progress of a domain job.
type JobStats struct {
	// Active is true while a job runs (or, for completed stats, when there
	// was a completed job to report).
	Active bool
	// Elapsed is the job's time so far.
	Elapsed time.Duration
	// Downtime is how long the guest was paused at the switch-over (known
	// once a migration completed).
	Downtime time.Duration
	// DataTotal, DataProcessed and DataRemaining count the bytes to
	// transfer: memory and copied disks.
	DataTotal, DataProcessed, DataRemaining uint64
	// MemoryTotal and MemoryProcessed count the guest memory.
	MemoryTotal, MemoryProcessed uint64
	// DiskTotal and DiskProcessed count the copied disks.
	DiskTotal, DiskProcessed uint64
	// Iterations counts the passes over the guest memory.
	Iterations uint64
}

// Conn is one connection to one launcher's libvirt daemon, as its parts: a
// user of the connection holds only the parts it calls. Close ends the
// connection (every part with it); domains keep running.
type Conn struct {
	Lifecycle
	Inspector
	Migrator
	GuestAccess
	Notes
	Hotplugger
	io.Closer
}

// DialFunc connects to the libvirt daemon listening on the unix socket at
// socketPath (which may be a /proc/self/fd/N/... path).
type DialFunc func(socketPath string) (Conn, error)
