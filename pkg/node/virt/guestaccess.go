package virt

import (
	"encoding/json"
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
	// FreezeFileSystems freezes the guest's file systems (guest-fsfreeze-freeze);
	// ThawFileSystems thaws them (guest-fsfreeze-thaw).
	FreezeFileSystems(name string) error
	ThawFileSystems(name string) error
	// FileSystemFreezeStatus is the agent's answer to guest-fsfreeze-status: FSFrozen or
	// FSThawed.
	FileSystemFreezeStatus(name string) (string, error)
}

// The guest agent's freeze states (guest-fsfreeze-status).
const (
	FSFrozen = "frozen"
	FSThawed = "thawed"
)

// SetAuthorizedKeys implements GuestAccess.
func (c guestAccessConn) SetAuthorizedKeys(name, user string, keys []string) error {
	return c.withDomain(name, func(d *libvirt.Domain) error {
		return agentError(name, "setting the SSH keys of "+user+" in", d.AuthorizedSSHKeysSet(user, keys, 0))
	})
}

// SetUserPassword implements GuestAccess.
func (c guestAccessConn) SetUserPassword(name, user, password string) error {
	return c.withDomain(name, func(d *libvirt.Domain) error {
		return agentError(name, "setting the password of "+user+" in", d.SetUserPassword(user, password, 0))
	})
}

// FreezeFileSystems implements GuestAccess.
func (c guestAccessConn) FreezeFileSystems(name string) error {
	return c.withDomain(name, func(d *libvirt.Domain) error {
		return agentError(name, "freezing the file systems of", d.FSFreeze(nil, 0))
	})
}

// ThawFileSystems implements GuestAccess.
func (c guestAccessConn) ThawFileSystems(name string) error {
	return c.withDomain(name, func(d *libvirt.Domain) error {
		return agentError(name, "thawing the file systems of", d.FSThaw(nil, 0))
	})
}

// FileSystemFreezeStatus implements GuestAccess.
func (c guestAccessConn) FileSystemFreezeStatus(name string) (string, error) {
	var status string
	err := c.withDomain(name, func(d *libvirt.Domain) error {
		var err error
		status, err = fsFreezeStatus(d)
		return agentError(name, "asking the freeze status of", err)
	})
	return status, err
}

// fsFreezeStatus asks the guest agent of d directly (libvirt has no call for it).
func fsFreezeStatus(d *libvirt.Domain) (string, error) {
	out, err := d.QemuAgentCommand(`{"execute":"guest-fsfreeze-status"}`, agentTimeout, 0)
	if err != nil {
		return "", err
	}
	var answer struct {
		Return string `json:"return"`
	}
	if err := json.Unmarshal([]byte(out), &answer); err != nil {
		return "", fmt.Errorf("the guest agent's answer to guest-fsfreeze-status: %w", err)
	}
	return answer.Return, nil
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
