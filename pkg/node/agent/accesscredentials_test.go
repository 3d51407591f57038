package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
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
	if _, err := e2.agent.sync(t.Context(), key); err == nil {
		t.Fatal("sync succeeded without the credential's secret")
	}
	e2.onlyDialed()
}
