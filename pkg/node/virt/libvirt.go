package virt

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"libvirt.org/go/libvirt"
)

var eventLoop struct {
	once sync.Once
	err  error
}

// StartEventLoop registers libvirt's default event loop implementation and
// runs it on a goroutine for the life of the process (once, however often it
// is called). It must happen before the first connection is opened, or that
// connection delivers no events.
func StartEventLoop() error {
	eventLoop.once.Do(func() {
		if err := libvirt.EventRegisterDefaultImpl(); err != nil {
			eventLoop.err = fmt.Errorf("registering the libvirt event loop: %w", err)
			return
		}
		go func() {
			for {
				// An iteration error is transient (e.g. an interrupted poll);
				// the loop must keep running for the connections to work.
				_ = libvirt.EventRunDefaultImpl()
			}
		}()
	})
	return eventLoop.err
}

// URI is the libvirt connection URI of a system-mode daemon listening on the
// unix socket at socketPath.
func URI(socketPath string) string {
	return "qemu+unix:///system?socket=" + socketPath
}

// Dial is the DialFunc of the real libvirt: it opens URI(socketPath) and keeps
// the connection alive with libvirt keepalives, so a dead daemon is noticed
// (Watch then reports Closed).
func Dial(socketPath string) (Conn, error) {
	return DialURI(URI(socketPath))
}

// DialURI opens any libvirt URI (tests use "test:///default").
func DialURI(uri string) (Conn, error) {
	if err := StartEventLoop(); err != nil {
		return Conn{}, err
	}
	c, err := libvirt.NewConnect(uri)
	if err != nil {
		return Conn{}, fmt.Errorf("connecting to %s: %w", uri, err)
	}
	// Keepalives need a remote driver; in-process drivers refuse them.
	_ = c.SetKeepAlive(5, 3)
	lc := &libvirtConn{conn: c}
	return Conn{Lifecycle: lifecycleConn{lc}, Inspector: inspectorConn{lc}, Migrator: migratorConn{lc},
		GuestAccess: guestAccessConn{lc}, Notes: notesConn{lc}, Hotplugger: hotplugConn{lc}, Closer: lc}, nil
}

// libvirtConn is the connection on libvirt.org/go/libvirt that the parts of a
// Conn share, and its helpers.
type libvirtConn struct {
	conn *libvirt.Connect
}

// lifecycleConn implements Lifecycle on the shared connection.
type lifecycleConn struct{ *libvirtConn }

// inspectorConn implements Inspector on the shared connection.
type inspectorConn struct{ *libvirtConn }

// migratorConn implements Migrator on the shared connection.
type migratorConn struct{ *libvirtConn }

// guestAccessConn implements GuestAccess on the shared connection.
type guestAccessConn struct{ *libvirtConn }

// notesConn implements Notes on the shared connection.
type notesConn struct{ *libvirtConn }

var (
	_ Lifecycle   = lifecycleConn{}
	_ Inspector   = inspectorConn{}
	_ Migrator    = migratorConn{}
	_ GuestAccess = guestAccessConn{}
	_ Notes       = notesConn{}
	_ io.Closer   = &libvirtConn{}
)

// withDomain looks the domain up, runs fn and frees the handle.
func (c *libvirtConn) withDomain(name string, fn func(*libvirt.Domain) error) error {
	d, err := c.conn.LookupDomainByName(name)
	if err != nil {
		return wrap(name, "looking up", err)
	}
	defer func() { _ = d.Free() }()
	return fn(d)
}

func (c *libvirtConn) do(name, what string, fn func(*libvirt.Domain) error) error {
	return c.withDomain(name, func(d *libvirt.Domain) error {
		return wrap(name, what, fn(d))
	})
}

// wrap adds context to a libvirt error and maps "no such domain" to ErrNotFound.
func wrap(name, what string, err error) error {
	if err == nil {
		return nil
	}
	var lerr libvirt.Error
	if errors.As(err, &lerr) && lerr.Code == libvirt.ERR_NO_DOMAIN {
		return fmt.Errorf("%s domain %s: %w (%s)", what, name, ErrNotFound, lerr.Message)
	}
	return fmt.Errorf("%s domain %s: %w", what, name, err)
}

// Define implements Lifecycle.
func (c lifecycleConn) Define(xml []byte) error {
	d, err := c.conn.DomainDefineXML(string(xml))
	if err != nil {
		return fmt.Errorf("defining domain: %w", err)
	}
	return d.Free()
}

// Start implements Lifecycle.
func (c lifecycleConn) Start(name string, paused bool) error {
	flags := libvirt.DOMAIN_NONE
	if paused {
		flags = libvirt.DOMAIN_START_PAUSED
	}
	return c.do(name, "starting", func(d *libvirt.Domain) error { return d.CreateWithFlags(flags) })
}

// Shutdown implements Lifecycle.
func (c lifecycleConn) Shutdown(name string) error {
	return c.do(name, "shutting down", func(d *libvirt.Domain) error {
		err := d.ShutdownFlags(libvirt.DOMAIN_SHUTDOWN_ACPI_POWER_BTN)
		var lerr libvirt.Error
		if errors.As(err, &lerr) && lerr.Code == libvirt.ERR_INVALID_ARG {
			// The driver has no ACPI method (the test driver): its default.
			return d.Shutdown()
		}
		return err
	})
}

// Destroy implements Lifecycle.
func (c lifecycleConn) Destroy(name string) error {
	return c.do(name, "destroying", func(d *libvirt.Domain) error { return d.Destroy() })
}

// Undefine implements Lifecycle.
func (c lifecycleConn) Undefine(name string) error {
	return c.do(name, "undefining", func(d *libvirt.Domain) error { return d.Undefine() })
}

// Pause implements Lifecycle.
func (c lifecycleConn) Pause(name string) error {
	return c.do(name, "pausing", func(d *libvirt.Domain) error { return d.Suspend() })
}

// Resume implements Lifecycle.
func (c lifecycleConn) Resume(name string) error {
	return c.do(name, "resuming", func(d *libvirt.Domain) error { return d.Resume() })
}

// Reboot implements Lifecycle.
func (c lifecycleConn) Reboot(name string) error {
	return c.do(name, "rebooting", func(d *libvirt.Domain) error { return d.Reboot(libvirt.DOMAIN_REBOOT_DEFAULT) })
}

// Info implements Inspector.
func (c inspectorConn) Info(name string) (DomainInfo, error) {
	info := DomainInfo{Name: name}
	err := c.do(name, "inspecting", func(d *libvirt.Domain) error {
		st, reason, err := d.GetState()
		if err != nil {
			return err
		}
		info.State, info.Reason = convertState(st, reason)
		xml, err := d.GetXMLDesc(0)
		if err != nil {
			return err
		}
		info.UID = MetadataUID([]byte(xml))
		return nil
	})
	return info, err
}

// GuestOS implements Inspector.
func (c inspectorConn) GuestOS(name string) (GuestOS, error) {
	var os GuestOS
	err := c.withDomain(name, func(d *libvirt.Domain) error {
		gi, err := guestInfo(d, name, libvirt.DOMAIN_GUEST_INFO_OS)
		if err != nil {
			return err
		}
		if gi.OS == nil {
			return fmt.Errorf("guest OS of %s: %w", name, ErrNoGuestAgent)
		}
		os = guestOS(gi.OS)
		return nil
	})
	return os, err
}

// GuestInfo implements Inspector.
func (c inspectorConn) GuestInfo(name string) (GuestInfo, error) {
	var info GuestInfo
	err := c.withDomain(name, func(d *libvirt.Domain) error {
		gi, err := guestInfo(d, name, libvirt.DOMAIN_GUEST_INFO_OS|libvirt.DOMAIN_GUEST_INFO_HOSTNAME|
			libvirt.DOMAIN_GUEST_INFO_TIMEZONE|libvirt.DOMAIN_GUEST_INFO_USERS|libvirt.DOMAIN_GUEST_INFO_FILESYSTEM)
		if err != nil {
			return err
		}
		if gi.OS != nil {
			info.OS = guestOS(gi.OS)
		}
		info.Hostname = gi.Hostname
		if gi.TimeZone != nil {
			info.TimezoneName, info.TimezoneOffset = gi.TimeZone.Name, gi.TimeZone.Offset
		}
		for _, u := range gi.Users {
			info.Users = append(info.Users, GuestUser{Name: u.Name, Domain: u.Domain, LoginTime: u.LoginTime})
		}
		for _, fs := range gi.FileSystems {
			f := GuestFileSystem{Name: fs.Name, MountPoint: fs.MountPoint, Type: fs.FSType, UsedBytes: fs.UsedBytes, TotalBytes: fs.TotalBytes}
			for _, disk := range fs.Disks {
				if disk.Serial != "" {
					f.DiskSerials = append(f.DiskSerials, disk.Serial)
				}
			}
			info.FileSystems = append(info.FileSystems, f)
		}
		agentSelfReport(d, &info)
		return nil
	})
	return info, err
}

// agentTimeout bounds the guest agent's answers about itself (seconds, libvirt's unit).
const agentTimeout = 5

// agentSelfReport adds what libvirt's guest info leaves out: the agent's version and commands
// (guest-info) and the file systems' freeze status (guest-fsfreeze-status), asked of the agent
// directly. Either may be missing (an old agent, a command disabled): the rest still counts.
func agentSelfReport(d *libvirt.Domain, info *GuestInfo) {
	if out, err := d.QemuAgentCommand(`{"execute":"guest-info"}`, agentTimeout, 0); err == nil {
		var answer struct {
			Return struct {
				Version  string `json:"version"`
				Commands []struct {
					Name    string `json:"name"`
					Enabled bool   `json:"enabled"`
				} `json:"supported_commands"`
			} `json:"return"`
		}
		if json.Unmarshal([]byte(out), &answer) == nil {
			info.AgentVersion = answer.Return.Version
			for _, c := range answer.Return.Commands {
				info.Commands = append(info.Commands, GuestAgentCommand{Name: c.Name, Enabled: c.Enabled})
			}
		}
	}
	if status, err := fsFreezeStatus(d); err == nil {
		info.FSFreezeStatus = status
	}
}

// guestInfo asks the guest agent of d; a guest without a (responsive) agent is ErrNoGuestAgent.
func guestInfo(d *libvirt.Domain, name string, types libvirt.DomainGuestInfoTypes) (*libvirt.DomainGuestInfo, error) {
	gi, err := d.GetGuestInfo(types, 0)
	if err != nil {
		return nil, agentError(name, "asking the guest agent of", err)
	}
	return gi, nil
}

func guestOS(os *libvirt.DomainGuestInfoOS) GuestOS {
	return GuestOS{
		ID: os.ID, Name: os.Name, PrettyName: os.PrettyName, Version: os.Version,
		VersionID: os.VersionID, KernelRelease: os.KernelRelease,
		KernelVersion: os.KernelVersion, Machine: os.Machine,
	}
}

// Watch implements Inspector: domain lifecycle events, the guest agent's connecting and
// disconnecting, and the connection's close callback all reach fn.
func (c inspectorConn) Watch(fn func(Event)) (func(), error) {
	emit := func(d *libvirt.Domain, agent bool) {
		if name, err := d.GetName(); err == nil {
			fn(Event{Domain: name, GuestAgent: agent})
		}
	}
	id, err := c.conn.DomainEventLifecycleRegister(nil, func(_ *libvirt.Connect, d *libvirt.Domain, _ *libvirt.DomainEventLifecycle) {
		emit(d, false)
	})
	if err != nil {
		return nil, fmt.Errorf("watching domain events: %w", err)
	}
	agentID, err := c.conn.DomainEventAgentLifecycleRegister(nil, func(_ *libvirt.Connect, d *libvirt.Domain, _ *libvirt.DomainEventAgentLifecycle) {
		emit(d, true)
	})
	if err != nil {
		_ = c.conn.DomainEventDeregister(id)
		return nil, fmt.Errorf("watching guest agent events: %w", err)
	}
	closed := func(*libvirt.Connect, libvirt.ConnectCloseReason) { fn(Event{Closed: true}) }
	if err := c.conn.RegisterCloseCallback(closed); err != nil {
		_ = c.conn.DomainEventDeregister(id)
		_ = c.conn.DomainEventDeregister(agentID)
		return nil, fmt.Errorf("watching the connection: %w", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = c.conn.DomainEventDeregister(id)
			_ = c.conn.DomainEventDeregister(agentID)
			_ = c.conn.UnregisterCloseCallback()
		})
	}, nil
}

// Close implements Conn.
func (c *libvirtConn) Close() error {
	_, err := c.conn.Close()
	return err
}

// convertState maps libvirt's state and reason codes to State and Reason.
func convertState(st libvirt.DomainState, reason int) (State, Reason) {
	switch st {
	case libvirt.DOMAIN_RUNNING:
		if libvirt.DomainRunningReason(reason) == libvirt.DOMAIN_RUNNING_MIGRATED {
			return StateRunning, ReasonMigrated
		}
		return StateRunning, ReasonUnknown
	case libvirt.DOMAIN_BLOCKED:
		return StateBlocked, ReasonUnknown
	case libvirt.DOMAIN_PAUSED:
		switch libvirt.DomainPausedReason(reason) {
		case libvirt.DOMAIN_PAUSED_USER:
			return StatePaused, ReasonUser
		case libvirt.DOMAIN_PAUSED_IOERROR:
			return StatePaused, ReasonIOError
		case libvirt.DOMAIN_PAUSED_CRASHED:
			return StatePaused, ReasonCrashed
		case libvirt.DOMAIN_PAUSED_MIGRATION, libvirt.DOMAIN_PAUSED_POSTCOPY_FAILED:
			return StatePaused, ReasonMigration
		case libvirt.DOMAIN_PAUSED_STARTING_UP:
			return StatePaused, ReasonStartingUp
		}
		return StatePaused, ReasonUnknown
	case libvirt.DOMAIN_SHUTDOWN:
		return StateShuttingDown, ReasonUnknown
	case libvirt.DOMAIN_SHUTOFF:
		switch libvirt.DomainShutoffReason(reason) {
		case libvirt.DOMAIN_SHUTOFF_SHUTDOWN:
			return StateShutoff, ReasonShutdown
		case libvirt.DOMAIN_SHUTOFF_DESTROYED:
			return StateShutoff, ReasonDestroyed
		case libvirt.DOMAIN_SHUTOFF_CRASHED:
			return StateShutoff, ReasonCrashed
		case libvirt.DOMAIN_SHUTOFF_FAILED:
			return StateShutoff, ReasonFailed
		}
		return StateShutoff, ReasonUnknown
	case libvirt.DOMAIN_CRASHED:
		return StateCrashed, ReasonCrashed
	case libvirt.DOMAIN_PMSUSPENDED:
		return StatePMSuspended, ReasonUnknown
	}
	return StateNoState, ReasonUnknown
}
