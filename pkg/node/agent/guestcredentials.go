package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// Reasons of the AccessCredentialsSynchronized condition (KubeVirt's).
const (
	ReasonAccessCredentialsSyncSuccess = "AccessCredentialsSyncSuccess"
	ReasonAccessCredentialsSyncFailed  = "AccessCredentialsSyncFailed"
)

// guestCredentials are the credentials of an instance that its guest agent writes into the
// running guest (qemuGuestAgent propagation): SSH keys and passwords by user.
type guestCredentials struct {
	keys      map[string][]string
	passwords map[string]string
}

// readCredentials reads the secrets of the instance's qemuGuestAgent credentials: every
// value of an SSH key secret is a key for each of the credential's users (sorted by secret
// key); a password secret maps users to passwords. ok is false when there are none.
func (g *guestInfo) readCredentials(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (creds guestCredentials, ok bool, err error) {
	creds = guestCredentials{keys: map[string][]string{}, passwords: map[string]string{}}
	for _, c := range vmi.Spec.AccessCredentials {
		switch {
		case c.SSHPublicKey != nil && c.SSHPublicKey.PropagationMethod.QemuGuestAgent != nil && c.SSHPublicKey.Source.Secret != nil:
			ok = true
			data, err := g.secrets.data(ctx, vmi.Namespace, c.SSHPublicKey.Source.Secret.SecretName)
			if err != nil {
				return creds, ok, err
			}
			for _, user := range c.SSHPublicKey.PropagationMethod.QemuGuestAgent.Users {
				for _, k := range slices.Sorted(maps.Keys(data)) {
					for _, line := range strings.Split(string(data[k]), "\n") {
						if line = strings.TrimSpace(line); line != "" {
							creds.keys[user] = append(creds.keys[user], line)
						}
					}
				}
			}
		case c.UserPassword != nil && c.UserPassword.PropagationMethod.QemuGuestAgent != nil && c.UserPassword.Source.Secret != nil:
			ok = true
			data, err := g.secrets.data(ctx, vmi.Namespace, c.UserPassword.Source.Secret.SecretName)
			if err != nil {
				return creds, ok, err
			}
			for user, pw := range data {
				creds.passwords[user] = string(pw)
			}
		}
	}
	return creds, ok, nil
}

// digest identifies the credentials' content (the secrets' values are not kept).
func (c guestCredentials) digest() string {
	h := sha256.New()
	for _, user := range slices.Sorted(maps.Keys(c.keys)) {
		fmt.Fprintf(h, "k\x00%s\x00%s\x00", user, strings.Join(c.keys[user], "\x00"))
	}
	for _, user := range slices.Sorted(maps.Keys(c.passwords)) {
		fmt.Fprintf(h, "p\x00%s\x00%s\x00", user, c.passwords[user])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// syncCredentials writes the instance's qemuGuestAgent credentials into its guest when they
// changed since they were last written through l (a restarted agent writes them once more), and
// returns the AccessCredentialsSynchronized condition; nil when the instance has none.
func (g *guestInfo) syncCredentials(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, l *launcher) *kubevirtv1.VirtualMachineInstanceCondition {
	failed := func(err error) *kubevirtv1.VirtualMachineInstanceCondition {
		c := cond(kubevirtv1.VirtualMachineInstanceAccessCredentialsSynchronized, corev1.ConditionFalse, ReasonAccessCredentialsSyncFailed, err.Error())
		return &c
	}
	creds, ok, err := g.readCredentials(ctx, vmi)
	switch {
	case !ok:
		return nil
	case err != nil:
		return failed(err)
	}
	if d := creds.digest(); d != l.credentialsDigest {
		for _, user := range slices.Sorted(maps.Keys(creds.keys)) {
			if err := l.conn.SetAuthorizedKeys(l.domain, user, creds.keys[user]); err != nil {
				return failed(err)
			}
		}
		for _, user := range slices.Sorted(maps.Keys(creds.passwords)) {
			if err := l.conn.SetUserPassword(l.domain, user, creds.passwords[user]); err != nil {
				return failed(err)
			}
		}
		l.credentialsDigest = d
	}
	c := cond(kubevirtv1.VirtualMachineInstanceAccessCredentialsSynchronized, corev1.ConditionTrue, ReasonAccessCredentialsSyncSuccess, "")
	return &c
}
