package virt

import (
	"errors"
	"fmt"

	"libvirt.org/go/libvirt"
)

// GuestAccess writes credentials into a running guest through its QEMU guest agent (KubeVirt's
// qemuGuestAgent propagation of access credentials). Both fail with an error wrapping
// ErrNoGuestAgent when the guest runs no (responsive) agent.
type GuestAccess interface {
	// SetAuthorizedKeys replaces the SSH authorized keys of user in the guest with keys.
	SetAuthorizedKeys(name, user string, keys []string) error
	// SetUserPassword sets the password of user in the guest.
	SetUserPassword(name, user, password string) error
}

// SetAuthorizedKeys implements GuestAccess.
func (c *libvirtConn) SetAuthorizedKeys(name, user string, keys []string) error {
	return c.withDomain(name, func(d *libvirt.Domain) error {
		return agentError(name, "setting the SSH keys of "+user+" in", d.AuthorizedSSHKeysSet(user, keys, 0))
	})
}

// SetUserPassword implements GuestAccess.
func (c *libvirtConn) SetUserPassword(name, user, password string) error {
	return c.withDomain(name, func(d *libvirt.Domain) error {
		return agentError(name, "setting the password of "+user+" in", d.SetUserPassword(user, password, 0))
	})
}

// agentError maps libvirt's answers for a guest without a (responsive) agent to ErrNoGuestAgent.
func agentError(name, what string, err error) error {
	var lerr libvirt.Error
	if errors.As(err, &lerr) && (lerr.Code == libvirt.ERR_AGENT_UNRESPONSIVE || lerr.Code == libvirt.ERR_OPERATION_INVALID ||
		lerr.Code == libvirt.ERR_ARGUMENT_UNSUPPORTED || lerr.Code == libvirt.ERR_NO_SUPPORT) {
		return fmt.Errorf("%s %s: %w (%s)", what, name, ErrNoGuestAgent, lerr.Message)
	}
	return wrap(name, what, err)
}
