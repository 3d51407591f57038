package launcher

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/dhcp"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
)

// Defaults of Options.
const (
	// DefaultLibvirtd is Debian's libvirt daemon (9.0: monolithic, no virtqemud).
	DefaultLibvirtd = "/usr/sbin/libvirtd"
	// DefaultConfigDir is where libvirtd looks for qemu.conf when it runs as root.
	DefaultConfigDir = "/etc/libvirt"
	// DefaultOffGrace is how long a domain may stay shut off before the launcher considers it
	// gone: the node agent may start it again right away (e.g. a reset).
	DefaultOffGrace = 2 * time.Second
	// DefaultPollInterval is how often the launcher lists its domains when libvirt's events
	// cannot tell it of changes, and while the domains stay shut off (OffGrace).
	DefaultPollInterval = 500 * time.Millisecond
	// DefaultResyncInterval is how often it lists them anyway while events tell it of changes.
	DefaultResyncInterval = 10 * time.Second
	// DefaultStartTimeout bounds the wait for libvirtd's socket to answer.
	DefaultStartTimeout = 2 * time.Minute
	// DefaultDaemonStopTimeout is how long a daemon gets to exit on SIGTERM before SIGKILL.
	DefaultDaemonStopTimeout = 5 * time.Second
	// DefaultResolvConf is the pod's resolver configuration.
	DefaultResolvConf = "/etc/resolv.conf"
)

// Options configure one launcher. Namespace, Name and UID identify the instance in logs only.
type Options struct {
	// Namespace of the VirtualMachineInstance.
	Namespace string
	// Name of the VirtualMachineInstance.
	Name string
	// UID of the VirtualMachineInstance.
	UID string
	// GracePeriod is what the guest gets to shut down after SIGTERM before it is destroyed.
	GracePeriod time.Duration
	// RunDir is the directory shared with the node agent (the `private` emptyDir).
	RunDir string
	// ConfigDir receives libvirtd.conf and qemu.conf.
	ConfigDir string
	// Libvirtd is the libvirt daemon's executable. Virtlogd, when set, is libvirt's log
	// daemon's, started beside it; by default it is not run: QEMU writes its log and the
	// serial console's itself (qemu.conf stdio_handler = "file"), so nothing in the pod talks to
	// virtlogd, and it would only cost memory (~3 MiB of PSS per VM).
	Libvirtd, Virtlogd string
	// StateRoot prefixes the daemons' own state directories (/run/libvirt, /var/lib/libvirt,
	// ...) that the launcher creates; "/" when empty. Tests point it elsewhere.
	StateRoot string
	// ClaimsDir is where the pod mounts filesystem-mode claims; ClaimDisks are the images to
	// create there when missing.
	ClaimsDir  string
	ClaimDisks ClaimDisks
	// ConfigVolumesDir is where the pod mounts config volumes; ConfigDisks are the disks to
	// build from them into DisksDir.
	ConfigVolumesDir string
	ConfigDisks      ConfigDisks
	// DisksDir is the disks volume.
	DisksDir string
	// OffGrace, PollInterval, ResyncInterval, StartTimeout and DaemonStopTimeout tune the
	// timing (defaults above).
	OffGrace, PollInterval, ResyncInterval, StartTimeout, DaemonStopTimeout time.Duration
	// ResolvConf is the pod's resolver configuration, whose name servers and search domains
	// the guest gets by DHCP.
	ResolvConf string
	// DHCPPort and DHCPReplyPort override DHCP's ports 67 and 68 (tests).
	DHCPPort, DHCPReplyPort int
	// HoldLock is a file the launcher keeps an exclusive lock on for as long as it runs: the
	// pod's copy containers wait for it to end (none when empty).
	HoldLock string
	// AwaitFiles must all exist before the launcher reports ready: the disk images and kernel
	// boot files the copy containers beside it copy into the disks volume.
	AwaitFiles []string
}

// Complete fills the unset fields with their defaults.
func (o *Options) Complete() {
	setString := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	setDuration := func(p *time.Duration, v time.Duration) {
		if *p <= 0 {
			*p = v
		}
	}
	setString(&o.RunDir, launcherpod.PrivateDir)
	setString(&o.ConfigDir, DefaultConfigDir)
	setString(&o.Libvirtd, DefaultLibvirtd)
	setString(&o.StateRoot, "/")
	setString(&o.ClaimsDir, launcherpod.ClaimsDir)
	setString(&o.ConfigVolumesDir, launcherpod.ConfigVolumesDir)
	setString(&o.DisksDir, launcherpod.DisksDir)
	setString(&o.ResolvConf, DefaultResolvConf)
	setDuration(&o.OffGrace, DefaultOffGrace)
	setDuration(&o.PollInterval, DefaultPollInterval)
	setDuration(&o.ResyncInterval, DefaultResyncInterval)
	setDuration(&o.StartTimeout, DefaultStartTimeout)
	setDuration(&o.DaemonStopTimeout, DefaultDaemonStopTimeout)
}

// maxSocketPath is the room for a unix socket path (sun_path) including its terminating NUL.
const maxSocketPath = 108

// Validate reports options the launcher cannot work with.
func (o *Options) Validate() error {
	var errs []error
	if o.GracePeriod < 0 {
		errs = append(errs, fmt.Errorf("grace period %s is negative", o.GracePeriod))
	}
	if !filepath.IsAbs(o.RunDir) {
		errs = append(errs, fmt.Errorf("run directory %q is not an absolute path", o.RunDir))
	}
	for _, f := range append([]string{o.HoldLock}, o.AwaitFiles...) {
		if f != "" && !filepath.IsAbs(f) {
			errs = append(errs, fmt.Errorf("%q is not an absolute path", f))
		}
	}
	if !filepath.IsAbs(o.ConfigDir) {
		errs = append(errs, fmt.Errorf("config directory %q is not an absolute path", o.ConfigDir))
	}
	for _, s := range []string{o.SocketPath(), o.AdminSocketPath()} {
		if len(s) >= maxSocketPath {
			errs = append(errs, fmt.Errorf("socket path %q is %d bytes, the limit is %d", s, len(s), maxSocketPath-1))
		}
	}
	return errors.Join(errs...)
}

// SocketDir is libvirtd's unix_sock_dir.
func (o *Options) SocketDir() string { return filepath.Join(o.RunDir, "libvirt") }

// SocketPath is libvirtd's read-write socket, the one the node agent connects to.
func (o *Options) SocketPath() string { return filepath.Join(o.SocketDir(), "libvirt-sock") }

// AdminSocketPath is libvirtd's admin socket, next to SocketPath.
func (o *Options) AdminSocketPath() string {
	return filepath.Join(o.SocketDir(), "libvirt-admin-sock")
}

// ReadyPath is the marker the launcher creates once libvirtd answers.
func (o *Options) ReadyPath() string { return filepath.Join(o.RunDir, podfs.ReadyMarker) }

// TerminatedPath is the marker the launcher creates when it is told to end (SIGTERM).
func (o *Options) TerminatedPath() string { return filepath.Join(o.RunDir, podfs.TerminatedMarker) }

// DHCPConfigPath is where the node agent hands over the guest's DHCP configuration.
func (o *Options) DHCPConfigPath() string { return filepath.Join(o.RunDir, dhcp.ConfigFile) }

// URI is the libvirt connection URI of the launcher's daemon.
func (o *Options) URI() string { return "qemu+unix:///system?socket=" + o.SocketPath() }
