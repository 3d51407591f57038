package streams

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// HandlerCommonName is the common name of the node agents' certificate. It
// serves the stream endpoint and, as a client certificate, opens migration
// tunnels to another node agent; it never opens a VMI's console, VNC or
// commands, which are the apiserver's.
const HandlerCommonName = "nativevirt-handler"

// MigrationUpgrade is the Upgrade token of a migration tunnel: after "101
// Switching Protocols" the TLS connection carries raw bytes both ways.
const MigrationUpgrade = "nativevirt-migration/1"

// MigrationChannel is one of the three connections a live migration makes
// from the source launcher's libvirt and QEMU to the target launcher's.
type MigrationChannel string

const (
	// ChannelLibvirt carries the source libvirtd's connection to the target
	// libvirtd (the peer-to-peer migration protocol).
	ChannelLibvirt MigrationChannel = "libvirt"
	// ChannelQEMU carries QEMU's migration stream (memory and device state).
	ChannelQEMU MigrationChannel = "qemu"
	// ChannelNBD carries the block migration of local disks (NBD).
	ChannelNBD MigrationChannel = "nbd"
)

// MigrationChannels lists every channel.
var MigrationChannels = []MigrationChannel{ChannelLibvirt, ChannelQEMU, ChannelNBD}

// Valid reports whether c is one of MigrationChannels.
func (c MigrationChannel) Valid() bool {
	for _, known := range MigrationChannels {
		if c == known {
			return true
		}
	}
	return false
}

// Socket is the file name of the channel's unix socket in the migration
// directory of a launcher pod (libvirt.sock, qemu.sock, nbd.sock).
func (c MigrationChannel) Socket() string {
	return string(c) + ".sock"
}

const migrationPrefix = "/v1/migrations/"

// MigrationTarget names the migration and channel of one tunnel request.
type MigrationTarget struct {
	// UID is the migration's uid (status.migrationState.migrationUid).
	UID types.UID
	// Channel is the connection being tunnelled.
	Channel MigrationChannel
}

// Path is the URL path of the tunnel.
func (t MigrationTarget) Path() string {
	return migrationPrefix + string(t.UID) + "/" + string(t.Channel)
}

// URL is the https URL of the tunnel at the node agent endpoint ("host:port").
func (t MigrationTarget) URL(endpoint string) string {
	u := url.URL{Scheme: "https", Host: endpoint, Path: t.Path()}
	return u.String()
}

// IsMigrationPath reports whether p is below the migration tunnels' prefix.
func IsMigrationPath(p string) bool {
	return strings.HasPrefix(p, migrationPrefix)
}

// ParseMigrationPath parses a path built by MigrationTarget.Path; the uid
// must look like an object uid and the channel must be known.
func ParseMigrationPath(p string) (MigrationTarget, error) {
	rest, ok := strings.CutPrefix(p, migrationPrefix)
	if !ok {
		return MigrationTarget{}, fmt.Errorf("path %q does not start with %s", p, migrationPrefix)
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 2 {
		return MigrationTarget{}, fmt.Errorf("path %q is not %s{migrationUID}/{channel}", p, migrationPrefix)
	}
	t := MigrationTarget{UID: types.UID(parts[0]), Channel: MigrationChannel(parts[1])}
	if errs := validation.IsDNS1123Subdomain(string(t.UID)); len(errs) > 0 {
		return MigrationTarget{}, fmt.Errorf("invalid migration uid %q: %s", t.UID, strings.Join(errs, "; "))
	}
	if !t.Channel.Valid() {
		return MigrationTarget{}, fmt.Errorf("unknown migration channel %q", t.Channel)
	}
	return t, nil
}
