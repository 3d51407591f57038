package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// keysFrom is an SSH key credential from secret, propagated through NoCloud or ConfigDrive.
func keysFrom(secret string, noCloud bool) kubevirtv1.AccessCredential {
	m := kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{ConfigDrive: &kubevirtv1.ConfigDriveSSHPublicKeyAccessCredentialPropagation{}}
	if noCloud {
		m = kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: &kubevirtv1.NoCloudSSHPublicKeyAccessCredentialPropagation{}}
	}
	return kubevirtv1.AccessCredential{SSHPublicKey: &kubevirtv1.SSHPublicKeyAccessCredential{
		Source:            kubevirtv1.SSHPublicKeyAccessCredentialSource{Secret: &kubevirtv1.AccessCredentialSecretSource{SecretName: secret}},
		PropagationMethod: m,
	}}
}

// TestAccessCredentialKeysInTheMetaData: the SSH keys of the credentials that propagate through
// the instance's kind of cloud-init volume reach its meta-data, every secret value a key named
// by its secret key; a secret that is missing fails the start.
func TestAccessCredentialKeysInTheMetaData(t *testing.T) {
	e := newEnv(t)
	vmi := scheduledVMI()
	vmi.Spec.Volumes = []kubevirtv1.Volume{{Name: "ci", VolumeSource: kubevirtv1.VolumeSource{
		CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}}}
	vmi.Spec.Domain.Devices.Disks = []kubevirtv1.Disk{{Name: "ci"}}
	vmi.Spec.AccessCredentials = []kubevirtv1.AccessCredential{keysFrom("team", true), keysFrom("ci", true), keysFrom("drive-only", false)}
	e.addVMI(vmi)
	e.addLauncher(true)
	e.secrets[ns+"/team"] = &corev1.Secret{Data: map[string][]byte{"alice": []byte("ssh-ed25519 AAAA alice\n"), "bob": []byte("ssh-rsa BBBB bob")}}
	e.secrets[ns+"/ci"] = &corev1.Secret{Data: map[string][]byte{"alice": []byte("ssh-ed25519 CCCC ci")}}
	// drive-only propagates through ConfigDrive: its secret (which does not exist) is not read.
	e.sync()
	want := map[string]string{"alice": "ssh-ed25519 AAAA alice", "bob": "ssh-rsa BBBB bob", "ci-alice": "ssh-ed25519 CCCC ci"}
	if len(e.isos) != 1 {
		t.Fatalf("%d ISOs made, want 1", len(e.isos))
	}
	if diff := cmp.Diff(want, e.isos[0].keys); diff != "" {
		t.Errorf("public keys of the NoCloud meta-data (-want +got):\n%s", diff)
	}

	// Without the secret of a NoCloud credential the guest does not start.
	e2 := newEnv(t)
	vmi2 := vmi.DeepCopy()
	vmi2.Spec.AccessCredentials = []kubevirtv1.AccessCredential{keysFrom("missing", true)}
	e2.addVMI(vmi2)
	e2.addLauncher(true)
	if _, err := e2.agent.instances.sync(t.Context(), key); err == nil {
		t.Fatal("sync succeeded without the credential's secret")
	}
	e2.onlyDialed()
}

// TestGuestAgentCredentials: qemuGuestAgent credentials are written into the running guest by
// its agent at the resync (SSH keys replaced per user, passwords set), once per content, and
// again when a secret changes; the AccessCredentialsSynchronized condition says whether it
// worked.
func TestGuestAgentCredentials(t *testing.T) {
	e := newEnv(t)
	vmi := scheduledVMI()
	vmi.Spec.AccessCredentials = []kubevirtv1.AccessCredential{
		{SSHPublicKey: &kubevirtv1.SSHPublicKeyAccessCredential{
			Source: kubevirtv1.SSHPublicKeyAccessCredentialSource{Secret: &kubevirtv1.AccessCredentialSecretSource{SecretName: "keys"}},
			PropagationMethod: kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{
				QemuGuestAgent: &kubevirtv1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"fedora", "root"}}},
		}},
		{UserPassword: &kubevirtv1.UserPasswordAccessCredential{
			Source: kubevirtv1.UserPasswordAccessCredentialSource{Secret: &kubevirtv1.AccessCredentialSecretSource{SecretName: "passwords"}},
			PropagationMethod: kubevirtv1.UserPasswordAccessCredentialPropagationMethod{
				QemuGuestAgent: &kubevirtv1.QemuGuestAgentUserPasswordAccessCredentialPropagation{}},
		}},
	}
	e.addVMI(vmi)
	e.addLauncher(true)
	e.secrets[ns+"/keys"] = &corev1.Secret{Data: map[string][]byte{"b": []byte("ssh-rsa BBBB b\n"), "a": []byte("ssh-ed25519 AAAA a1\nssh-ed25519 AAAA a2\n")}}
	e.secrets[ns+"/passwords"] = &corev1.Secret{Data: map[string][]byte{"fedora": []byte("s3cr3t")}}
	e.sync()

	// No guest agent yet: the condition says so at the resync.
	e.now = e.now.Add(resync)
	e.sync()
	c := e.condition(kubevirtv1.VirtualMachineInstanceAccessCredentialsSynchronized)
	if c == nil || c.Status != corev1.ConditionFalse || c.Reason != ReasonAccessCredentialsSyncFailed ||
		!strings.Contains(c.Message, "guest agent not connected") {
		t.Errorf("without a guest agent: %+v, want False, %s, the agent not connected", c, ReasonAccessCredentialsSyncFailed)
	}

	e.daemon.SetGuestOS(domain, &virt.GuestOS{ID: "fedora"})
	e.daemon.ResetCalls()
	e.now = e.now.Add(resync)
	e.sync()
	if c := e.condition(kubevirtv1.VirtualMachineInstanceAccessCredentialsSynchronized); c == nil || c.Status != corev1.ConditionTrue ||
		c.Reason != ReasonAccessCredentialsSyncSuccess {
		t.Errorf("with a guest agent: %+v, want True, %s", c, ReasonAccessCredentialsSyncSuccess)
	}
	keys := []string{"ssh-ed25519 AAAA a1", "ssh-ed25519 AAAA a2", "ssh-rsa BBBB b"}
	dom := e.daemon.Domain(domain)
	if diff := cmp.Diff(map[string][]string{"fedora": keys, "root": keys}, dom.AuthorizedKeys); diff != "" {
		t.Errorf("authorized keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"fedora": "s3cr3t"}, dom.Passwords); diff != "" {
		t.Errorf("passwords (-want +got):\n%s", diff)
	}
	wrote := func() (n int) {
		for _, call := range e.daemon.Calls() {
			if strings.HasPrefix(call, "SetAuthorizedKeys") || strings.HasPrefix(call, "SetUserPassword") {
				n++
			}
		}
		return n
	}
	if n := wrote(); n != 3 {
		t.Errorf("%d writes into the guest, want 3 (two users' keys, one password)", n)
	}

	// Unchanged: not written again. A changed secret: written again.
	e.now = e.now.Add(resync)
	e.sync()
	if n := wrote(); n != 3 {
		t.Errorf("%d writes after an unchanged resync, want still 3", n)
	}
	e.secrets[ns+"/passwords"] = &corev1.Secret{Data: map[string][]byte{"fedora": []byte("n3w")}}
	e.now = e.now.Add(resync)
	e.sync()
	if n, pw := wrote(), e.daemon.Domain(domain).Passwords["fedora"]; n != 6 || pw != "n3w" {
		t.Errorf("after the password changed: %d writes, password %q; want 6 and n3w", n, pw)
	}
}
