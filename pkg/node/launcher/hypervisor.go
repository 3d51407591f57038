package launcher

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"libvirt.org/go/libvirt"

	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// Domain is what the launcher needs to know about one libvirt domain.
type Domain struct {
	// Name of the domain.
	Name string
	// Active is true while the domain has a QEMU process (running, paused, shutting down).
	Active bool
}

// Hypervisor is the launcher's view of its libvirt daemon.
type Hypervisor interface {
	// Domains lists every defined or running domain.
	Domains() ([]Domain, error)
	// Shutdown presses the ACPI power button of the named domain.
	Shutdown(name string) error
	// Destroy stops the named domain at once.
	Destroy(name string) error
	// ProbeQEMU has libvirt work out the capabilities of the host's QEMU (which it then keeps
	// in its capability cache).
	ProbeQEMU() error
	// AgentCommand passes a QEMU guest agent command (JSON) to the named domain's agent and
	// returns its answer; it waits at most timeout (rounded up to seconds) for the agent.
	AgentCommand(name, command string, timeout time.Duration) (string, error)
	// OnLifecycle calls fn whenever a domain is defined, started, paused, stopped or undefined,
	// until stop is called. fn runs on libvirt's event loop: it must neither block nor call
	// libvirt.
	OnLifecycle(fn func()) (stop func(), err error)
	// Close releases the connection.
	Close() error
}

// DialFunc connects to the libvirt daemon behind uri.
type DialFunc func(uri string) (Hypervisor, error)

// DialLibvirt is the DialFunc of the real libvirt. Its connections deliver events: libvirt's
// event loop runs before the first one is opened.
func DialLibvirt(uri string) (Hypervisor, error) {
	if err := virt.StartEventLoop(); err != nil {
		return nil, err
	}
	c, err := libvirt.NewConnect(uri)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", uri, err)
	}
	return &libvirtHypervisor{conn: c}, nil
}

// libvirtHypervisor implements Hypervisor with libvirt.org/go/libvirt.
type libvirtHypervisor struct {
	conn *libvirt.Connect
}

var _ Hypervisor = &libvirtHypervisor{}

func (h *libvirtHypervisor) Domains() ([]Domain, error) {
	doms, err := h.conn.ListAllDomains(0)
	if err != nil {
		return nil, fmt.Errorf("listing domains: %w", err)
	}
	out := make([]Domain, 0, len(doms))
	var errs []error
	for i := range doms {
		d := &doms[i]
		name, err := d.GetName()
		active, aerr := d.IsActive()
		_ = d.Free()
		if err != nil || aerr != nil {
			// A domain undefined between the list and the query is simply gone.
			if isNoDomain(err) || isNoDomain(aerr) {
				continue
			}
			errs = append(errs, errors.Join(err, aerr))
			continue
		}
		out = append(out, Domain{Name: name, Active: active})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("querying domains: %w", errors.Join(errs...))
	}
	return out, nil
}

func (h *libvirtHypervisor) OnLifecycle(fn func()) (func(), error) {
	id, err := h.conn.DomainEventLifecycleRegister(nil, func(*libvirt.Connect, *libvirt.Domain, *libvirt.DomainEventLifecycle) {
		fn()
	})
	if err != nil {
		return nil, fmt.Errorf("watching domain events: %w", err)
	}
	var once sync.Once
	return func() { once.Do(func() { _ = h.conn.DomainEventDeregister(id) }) }, nil
}

func (h *libvirtHypervisor) Shutdown(name string) error {
	return h.withDomain(name, func(d *libvirt.Domain) error {
		return d.ShutdownFlags(libvirt.DOMAIN_SHUTDOWN_ACPI_POWER_BTN)
	})
}

func (h *libvirtHypervisor) Destroy(name string) error {
	return h.withDomain(name, func(d *libvirt.Domain) error { return d.Destroy() })
}

func (h *libvirtHypervisor) ProbeQEMU() error {
	// The host's default emulator and architecture; "qemu" (TCG) is valid with or without
	// /dev/kvm, and the probe covers KVM as well when it is usable.
	if _, err := h.conn.GetDomainCapabilities("", "", "", "qemu", 0); err != nil {
		return fmt.Errorf("probing QEMU: %w", err)
	}
	return nil
}

func (h *libvirtHypervisor) AgentCommand(name, command string, timeout time.Duration) (string, error) {
	d, err := h.conn.LookupDomainByName(name)
	if err != nil {
		return "", fmt.Errorf("looking up domain %s: %w", name, err)
	}
	defer func() { _ = d.Free() }()
	secs := int((timeout + time.Second - 1) / time.Second)
	out, err := d.QemuAgentCommand(command, libvirt.DomainQemuAgentCommandTimeout(secs), 0)
	var lerr libvirt.Error
	if errors.As(err, &lerr) {
		// libvirt's message is what a user reads in the probe's event.
		return "", errors.New(lerr.Message)
	}
	return out, err
}

func (h *libvirtHypervisor) Close() error {
	_, err := h.conn.Close()
	return err
}

// withDomain runs fn on the named domain; a domain that is gone, or no longer running, is not
// an error: the caller wanted it stopped.
func (h *libvirtHypervisor) withDomain(name string, fn func(*libvirt.Domain) error) error {
	d, err := h.conn.LookupDomainByName(name)
	if err != nil {
		if isNoDomain(err) {
			return nil
		}
		return fmt.Errorf("looking up domain %s: %w", name, err)
	}
	defer func() { _ = d.Free() }()
	if err := fn(d); err != nil && !isNoDomain(err) && !isNotRunning(err) {
		return fmt.Errorf("domain %s: %w", name, err)
	}
	return nil
}

func isNoDomain(err error) bool {
	var lerr libvirt.Error
	return errors.As(err, &lerr) && lerr.Code == libvirt.ERR_NO_DOMAIN
}

func isNotRunning(err error) bool {
	var lerr libvirt.Error
	return errors.As(err, &lerr) && lerr.Code == libvirt.ERR_OPERATION_INVALID
}
