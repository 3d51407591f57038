// Package fake is an in-memory libvirt for unit tests of the node agent: one
// Daemon per launcher, holding domains whose states follow the calls made on
// them, recording every call and delivering lifecycle events to watchers.
package fake

import (
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"net"
	"sync"

	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// Domain is the fake's record of one domain.
type Domain struct {
	// XML is the last defined XML.
	XML []byte
	// Info is the current state.
	Info virt.DomainInfo
	// PID stands for the QEMU process: it changes on every Start, so tests
	// can tell a restarted guest from a re-attached one.
	PID int
	// GuestOS is returned by GuestOS when non-nil.
	GuestOS *virt.GuestOS
	// GuestInfo is returned by GuestInfo when non-nil (else GuestOS alone, if set).
	GuestInfo *virt.GuestInfo
	// AuthorizedKeys and Passwords are what the guest agent wrote, by user (the guest has
	// an agent when GuestOS or GuestInfo is set).
	AuthorizedKeys map[string][]string
	Passwords      map[string]string
	// FSFrozen is the guest agent's freeze state of the file systems.
	FSFrozen bool
	// Stats is what Stats returns (zero counters when nil).
	Stats *virt.DomainStats
	// Notes are the domain's notes (virt.Notes).
	Notes map[string]string
	// GuestInterfaces are what the guest agent reports of the guest's interfaces.
	GuestInterfaces []virt.GuestInterface
}

// Daemon is one fake libvirt daemon.
type Daemon struct {
	mu       sync.Mutex
	domains  map[string]*Domain
	calls    []string
	watchers map[int]func(virt.Event)
	nextID   int
	nextPID  int
	// ShutdownIgnored makes Shutdown a no-op, like a guest without ACPI.
	ShutdownIgnored bool
	// StartErr, when set, fails the next Start (QEMU refusing the XML).
	StartErr error
	// Console is the guest side of the last console opened; tests read what
	// sessions typed and write guest output to it.
	Console net.Conn
	// MigrateHook, when set, plays the migration started by Migrate (see
	// migrate.go); nil migrates at once and successfully.
	MigrateHook MigrateHook
	jobs        map[string]*job
	dead        bool
}

// NewDaemon returns an empty daemon.
func NewDaemon() *Daemon {
	return &Daemon{domains: map[string]*Domain{}, watchers: map[int]func(virt.Event){}, nextPID: 1000, jobs: map[string]*job{}}
}

// Dial returns a Conn to the daemon (any socket path).
func (d *Daemon) Dial(string) (virt.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return virt.Conn{}, fmt.Errorf("fake daemon is gone")
	}
	d.calls = append(d.calls, "Dial")
	c := &conn{d: d}
	return virt.Conn{Lifecycle: lifecycleConn{c}, Inspector: inspectorConn{c}, Migrator: migratorConn{c},
		GuestAccess: guestAccessConn{c}, Notes: notesConn{c}, Hotplugger: hotplugConn{c}, Closer: c}, nil
}

// Calls returns the calls made so far ("Define ns_name", "Start ns_name", ...).
func (d *Daemon) Calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

// ResetCalls forgets the recorded calls.
func (d *Daemon) ResetCalls() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = nil
}

// Domain returns a copy of the named domain, or nil.
func (d *Daemon) Domain(name string) *Domain {
	d.mu.Lock()
	defer d.mu.Unlock()
	dom, ok := d.domains[name]
	if !ok {
		return nil
	}
	c := *dom
	c.Notes = maps.Clone(dom.Notes)
	return &c
}

// SetState changes a domain's state from the outside (the guest powering
// off, QEMU crashing) and emits an event.
func (d *Daemon) SetState(name string, st virt.State, reason virt.Reason) {
	d.mu.Lock()
	if dom, ok := d.domains[name]; ok {
		dom.Info.State, dom.Info.Reason = st, reason
	}
	d.mu.Unlock()
	d.emit(virt.Event{Domain: name})
}

// SetGuestInfo sets everything the guest agent reports (GuestInfo; GuestOS keeps its own).
func (d *Daemon) SetGuestInfo(name string, info *virt.GuestInfo) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if dom, ok := d.domains[name]; ok {
		dom.GuestInfo = info
	}
}

// SetGuestOS sets what the guest agent reports.
func (d *Daemon) SetGuestOS(name string, os *virt.GuestOS) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if dom, ok := d.domains[name]; ok {
		dom.GuestOS = os
	}
}

// ConnectAgent gives the guest an agent reporting os (nil: the agent went away) and tells the
// watchers, as libvirt's agent lifecycle event does.
func (d *Daemon) ConnectAgent(name string, os *virt.GuestOS) {
	d.SetGuestOS(name, os)
	d.emit(virt.Event{Domain: name, GuestAgent: true})
}

// Kill simulates the daemon dying: watchers get Closed, later dials fail.
func (d *Daemon) Kill() {
	d.mu.Lock()
	d.dead = true
	d.mu.Unlock()
	d.emit(virt.Event{Closed: true})
}

func (d *Daemon) emit(ev virt.Event) {
	d.mu.Lock()
	fns := make([]func(virt.Event), 0, len(d.watchers))
	for _, fn := range d.watchers {
		fns = append(fns, fn)
	}
	d.mu.Unlock()
	for _, fn := range fns {
		fn(ev)
	}
}

// conn is one connection to a Daemon.
type conn struct {
	d *Daemon
}

// lifecycleConn implements virt.Lifecycle on the shared fake connection.
type lifecycleConn struct{ *conn }

// inspectorConn implements virt.Inspector on the shared fake connection.
type inspectorConn struct{ *conn }

// migratorConn implements virt.Migrator on the shared fake connection.
type migratorConn struct{ *conn }

// guestAccessConn implements virt.GuestAccess on the shared fake connection.
type guestAccessConn struct{ *conn }

// notesConn implements virt.Notes on the shared fake connection.
type notesConn struct{ *conn }

var (
	_ virt.Lifecycle   = lifecycleConn{}
	_ virt.Inspector   = inspectorConn{}
	_ virt.Migrator    = migratorConn{}
	_ virt.GuestAccess = guestAccessConn{}
	_ virt.Notes       = notesConn{}
	_ io.Closer        = &conn{}
)

// change runs fn on the named domain under the lock, records the call and
// emits an event when fn succeeded.
func (c *conn) change(call, name string, fn func(*Domain) error) error {
	c.d.mu.Lock()
	c.d.calls = append(c.d.calls, call+" "+name)
	if c.d.dead {
		c.d.mu.Unlock()
		return fmt.Errorf("%s %s: connection closed", call, name)
	}
	dom, ok := c.d.domains[name]
	if !ok {
		c.d.mu.Unlock()
		return fmt.Errorf("%s %s: %w", call, name, virt.ErrNotFound)
	}
	err := fn(dom)
	c.d.mu.Unlock()
	if err == nil {
		c.d.emit(virt.Event{Domain: name})
	}
	return err
}

type domainXML struct {
	Name string `xml:"name"`
}

func (c lifecycleConn) Define(x []byte) error {
	var dx domainXML
	if err := xml.Unmarshal(x, &dx); err != nil || dx.Name == "" {
		return fmt.Errorf("define: invalid domain XML: %v", err)
	}
	c.d.mu.Lock()
	c.d.calls = append(c.d.calls, "Define "+dx.Name)
	dom, ok := c.d.domains[dx.Name]
	if !ok {
		dom = &Domain{Info: virt.DomainInfo{Name: dx.Name, State: virt.StateShutoff, Reason: virt.ReasonUnknown}}
		c.d.domains[dx.Name] = dom
	}
	dom.XML = append([]byte(nil), x...)
	dom.Info.UID = virt.MetadataUID(x)
	c.d.mu.Unlock()
	c.d.emit(virt.Event{Domain: dx.Name})
	return nil
}

func (c lifecycleConn) Start(name string, paused bool) error {
	return c.change("Start", name, func(dom *Domain) error {
		if dom.Info.Active() {
			return fmt.Errorf("domain %s is already active", name)
		}
		if err := c.d.StartErr; err != nil {
			c.d.StartErr = nil
			dom.Info.Reason = virt.ReasonFailed
			return err
		}
		c.d.nextPID++
		dom.PID = c.d.nextPID
		dom.Info.State, dom.Info.Reason = virt.StateRunning, virt.ReasonUnknown
		if paused {
			// As libvirt: a domain started paused is paused by the user.
			dom.Info.State, dom.Info.Reason = virt.StatePaused, virt.ReasonUser
		}
		return nil
	})
}

func (c lifecycleConn) Shutdown(name string) error {
	return c.change("Shutdown", name, func(dom *Domain) error {
		if !dom.Info.Active() {
			return fmt.Errorf("domain %s is not running", name)
		}
		if !c.d.ShutdownIgnored {
			dom.Info.State, dom.Info.Reason = virt.StateShutoff, virt.ReasonShutdown
			dom.PID = 0
		}
		return nil
	})
}

func (c lifecycleConn) Destroy(name string) error {
	return c.change("Destroy", name, func(dom *Domain) error {
		if !dom.Info.Active() {
			return fmt.Errorf("domain %s is not running", name)
		}
		dom.Info.State, dom.Info.Reason = virt.StateShutoff, virt.ReasonDestroyed
		dom.PID = 0
		return nil
	})
}

func (c lifecycleConn) Undefine(name string) error {
	return c.change("Undefine", name, func(dom *Domain) error {
		delete(c.d.domains, name)
		return nil
	})
}

func (c lifecycleConn) Pause(name string) error {
	return c.change("Pause", name, func(dom *Domain) error {
		if dom.Info.State != virt.StateRunning {
			return fmt.Errorf("domain %s is not running", name)
		}
		dom.Info.State, dom.Info.Reason = virt.StatePaused, virt.ReasonUser
		return nil
	})
}

func (c lifecycleConn) Resume(name string) error {
	return c.change("Resume", name, func(dom *Domain) error {
		if dom.Info.State != virt.StatePaused {
			return fmt.Errorf("domain %s is not paused", name)
		}
		dom.Info.State, dom.Info.Reason = virt.StateRunning, virt.ReasonUnknown
		return nil
	})
}

func (c lifecycleConn) Reboot(name string) error {
	return c.change("Reboot", name, func(dom *Domain) error {
		if !dom.Info.Active() {
			return fmt.Errorf("domain %s is not running", name)
		}
		return nil
	})
}

func (c inspectorConn) Info(name string) (virt.DomainInfo, error) {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	if c.d.dead {
		return virt.DomainInfo{}, fmt.Errorf("info %s: connection closed", name)
	}
	dom, ok := c.d.domains[name]
	if !ok {
		return virt.DomainInfo{}, fmt.Errorf("info %s: %w", name, virt.ErrNotFound)
	}
	return dom.Info, nil
}

func (c inspectorConn) GuestOS(name string) (virt.GuestOS, error) {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	dom, ok := c.d.domains[name]
	if !ok {
		return virt.GuestOS{}, fmt.Errorf("guest OS %s: %w", name, virt.ErrNotFound)
	}
	if dom.GuestOS == nil {
		return virt.GuestOS{}, fmt.Errorf("guest OS %s: %w", name, virt.ErrNoGuestAgent)
	}
	return *dom.GuestOS, nil
}

func (c inspectorConn) GuestInfo(name string) (virt.GuestInfo, error) {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	dom, ok := c.d.domains[name]
	if !ok {
		return virt.GuestInfo{}, fmt.Errorf("guest info %s: %w", name, virt.ErrNotFound)
	}
	switch {
	case dom.GuestInfo != nil:
		return *dom.GuestInfo, nil
	case dom.GuestOS != nil:
		return virt.GuestInfo{OS: *dom.GuestOS}, nil
	}
	return virt.GuestInfo{}, fmt.Errorf("guest info %s: %w", name, virt.ErrNoGuestAgent)
}

// SetAuthorizedKeys records the keys of user, when the guest has an agent.
func (c guestAccessConn) SetAuthorizedKeys(name, user string, keys []string) error {
	return c.withAgent(name, "SetAuthorizedKeys", user, func(dom *Domain) {
		if dom.AuthorizedKeys == nil {
			dom.AuthorizedKeys = map[string][]string{}
		}
		dom.AuthorizedKeys[user] = append([]string(nil), keys...)
	})
}

// SetUserPassword records the password of user, when the guest has an agent.
func (c guestAccessConn) SetUserPassword(name, user, password string) error {
	return c.withAgent(name, "SetUserPassword", user, func(dom *Domain) {
		if dom.Passwords == nil {
			dom.Passwords = map[string]string{}
		}
		dom.Passwords[user] = password
	})
}

// FreezeFileSystems freezes the guest's file systems, when the guest has an agent.
func (c guestAccessConn) FreezeFileSystems(name string) error {
	return c.withAgent(name, "FreezeFileSystems", "", func(dom *Domain) { dom.FSFrozen = true })
}

// ThawFileSystems thaws them, when the guest has an agent.
func (c guestAccessConn) ThawFileSystems(name string) error {
	return c.withAgent(name, "ThawFileSystems", "", func(dom *Domain) { dom.FSFrozen = false })
}

// FileSystemFreezeStatus reports the freeze state, when the guest has an agent. A query: not
// recorded among the calls.
func (c guestAccessConn) FileSystemFreezeStatus(name string) (string, error) {
	status := virt.FSThawed
	err := c.query(name, "freeze status", true, func(dom *Domain) {
		if dom.FSFrozen {
			status = virt.FSFrozen
		}
	})
	return status, err
}

// withAgent records the call ("<call> <domain> <user>") and runs fn on the domain when its
// guest has an agent.
func (c *conn) withAgent(name, call, user string, fn func(*Domain)) error {
	c.d.mu.Lock()
	c.d.calls = append(c.d.calls, call+" "+name+" "+user)
	c.d.mu.Unlock()
	return c.query(name, call, true, fn)
}

// query runs fn on the domain under the daemon's lock, without recording a call: ErrNotFound
// without the domain, ErrNoGuestAgent when agent is asked for and the guest has none.
func (c *conn) query(name, what string, agent bool, fn func(*Domain)) error {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	dom, ok := c.d.domains[name]
	switch {
	case !ok:
		return fmt.Errorf("%s %s: %w", what, name, virt.ErrNotFound)
	case agent && dom.GuestOS == nil && dom.GuestInfo == nil:
		return fmt.Errorf("%s %s: %w", what, name, virt.ErrNoGuestAgent)
	}
	fn(dom)
	return nil
}

// Stats returns the domain's Stats (zero counters when none were set).
func (c inspectorConn) Stats(name string) (virt.DomainStats, error) {
	var s virt.DomainStats
	err := c.query(name, "stats", false, func(dom *Domain) {
		if dom.Stats != nil {
			s = *dom.Stats
		}
	})
	return s, err
}

// GuestInterfaces returns the domain's GuestInterfaces, when the guest has an agent.
func (c inspectorConn) GuestInterfaces(name string) ([]virt.GuestInterface, error) {
	var out []virt.GuestInterface
	err := c.query(name, "guest interfaces", true, func(dom *Domain) {
		out = append(out, dom.GuestInterfaces...)
	})
	return out, err
}

// SetGuestInterfaces sets what the guest agent reports of the guest's interfaces.
func (d *Daemon) SetGuestInterfaces(name string, ifaces []virt.GuestInterface) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if dom, ok := d.domains[name]; ok {
		dom.GuestInterfaces = ifaces
	}
}

// Details parses the domain's defined XML.
func (c inspectorConn) Details(name string) (virt.DomainDetails, error) {
	var raw []byte
	if err := c.query(name, "details", false, func(dom *Domain) { raw = dom.XML }); err != nil {
		return virt.DomainDetails{}, err
	}
	return virt.ParseDetails(raw)
}

// SetNote implements virt.Notes.
func (c notesConn) SetNote(name, key, value string) error {
	return c.query(name, "note", false, func(dom *Domain) {
		if dom.Notes == nil {
			dom.Notes = map[string]string{}
		}
		if value == "" {
			delete(dom.Notes, key)
		} else {
			dom.Notes[key] = value
		}
	})
}

// Note implements virt.Notes.
func (c notesConn) Note(name, key string) (string, error) {
	var value string
	err := c.query(name, "note", false, func(dom *Domain) { value = dom.Notes[key] })
	return value, err
}

// SetStats sets what Stats reports for the domain.
func (d *Daemon) SetStats(name string, s *virt.DomainStats) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if dom, ok := d.domains[name]; ok {
		dom.Stats = s
	}
}

// Screenshot returns a 2×1 PPM: a red and a blue pixel.
func (c inspectorConn) Screenshot(name string) (string, []byte, error) {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	if _, ok := c.d.domains[name]; !ok {
		return "", nil, fmt.Errorf("screenshot %s: %w", name, virt.ErrNotFound)
	}
	return "image/x-portable-pixmap", append([]byte("P6\n2 1\n255\n"), 255, 0, 0, 0, 0, 255), nil
}

// OpenConsole returns one end of an in-memory pipe; the other end becomes
// Daemon.Console. Opening again closes the previous console (like the force flag).
func (c inspectorConn) OpenConsole(name string) (io.ReadWriteCloser, error) {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	c.d.calls = append(c.d.calls, "OpenConsole "+name)
	if _, ok := c.d.domains[name]; !ok {
		return nil, fmt.Errorf("console %s: %w", name, virt.ErrNotFound)
	}
	if c.d.Console != nil {
		_ = c.d.Console.Close()
	}
	agentSide, guestSide := net.Pipe()
	c.d.Console = guestSide
	return agentSide, nil
}

// GuestConsole returns the guest side of the current console, or nil.
func (d *Daemon) GuestConsole() net.Conn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.Console
}

func (c inspectorConn) Watch(fn func(virt.Event)) (func(), error) {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	c.d.nextID++
	id := c.d.nextID
	c.d.watchers[id] = fn
	return func() {
		c.d.mu.Lock()
		defer c.d.mu.Unlock()
		delete(c.d.watchers, id)
	}, nil
}

func (c *conn) Close() error { return nil }
