package validation

import (
	"testing"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// sshKeys is an SSH key credential from secret propagated by method.
func sshKeys(secret string, method kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod) kubevirtv1.AccessCredential {
	c := kubevirtv1.AccessCredential{SSHPublicKey: &kubevirtv1.SSHPublicKeyAccessCredential{PropagationMethod: method}}
	if secret != "" {
		c.SSHPublicKey.Source.Secret = &kubevirtv1.AccessCredentialSecretSource{SecretName: secret}
	}
	return c
}

// passwords is a password credential from secret, set by the guest agent when agent.
func passwords(secret string, agent bool) kubevirtv1.AccessCredential {
	c := kubevirtv1.AccessCredential{UserPassword: &kubevirtv1.UserPasswordAccessCredential{
		Source: kubevirtv1.UserPasswordAccessCredentialSource{Secret: &kubevirtv1.AccessCredentialSecretSource{SecretName: secret}}}}
	if agent {
		c.UserPassword.PropagationMethod.QemuGuestAgent = &kubevirtv1.QemuGuestAgentUserPasswordAccessCredentialPropagation{}
	}
	return c
}

func TestValidateAccessCredentials(t *testing.T) {
	noCloud := kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: &kubevirtv1.NoCloudSSHPublicKeyAccessCredentialPropagation{}}
	configDrive := kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{ConfigDrive: &kubevirtv1.ConfigDriveSSHPublicKeyAccessCredentialPropagation{}}
	creds := func(c ...kubevirtv1.AccessCredential) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		return func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.AccessCredentials = c }
	}
	runSpecCases(t, []specCase{
		// validSpec has a cloudInitNoCloud volume.
		{"keys through NoCloud meta-data, from two secrets", creds(sshKeys("team-keys", noCloud), sshKeys("ci-keys", noCloud)), nil},
		{"ConfigDrive keys without a ConfigDrive volume", creds(sshKeys("keys", configDrive)),
			[]string{"Invalid:spec.accessCredentials[0].sshPublicKey.propagationMethod.configDrive"}},
		{"NoCloud keys without a NoCloud volume", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Volumes[1].VolumeSource = kubevirtv1.VolumeSource{CloudInitConfigDrive: &kubevirtv1.CloudInitConfigDriveSource{UserData: "#cloud-config\n"}}
			s.AccessCredentials = []kubevirtv1.AccessCredential{sshKeys("a", configDrive), sshKeys("b", noCloud)}
		}, []string{"Invalid:spec.accessCredentials[1].sshPublicKey.propagationMethod.noCloud"}},
		{"no propagation, two propagations", creds(sshKeys("a", kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{}),
			sshKeys("b", kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: noCloud.NoCloud, ConfigDrive: configDrive.ConfigDrive})),
			[]string{"Required:spec.accessCredentials[0].sshPublicKey.propagationMethod", "Invalid:spec.accessCredentials[1].sshPublicKey.propagationMethod"}},
		{"no secret, no name, a bad name, the same secret twice", creds(sshKeys("", noCloud),
			kubevirtv1.AccessCredential{SSHPublicKey: &kubevirtv1.SSHPublicKeyAccessCredential{PropagationMethod: noCloud,
				Source: kubevirtv1.SSHPublicKeyAccessCredentialSource{Secret: &kubevirtv1.AccessCredentialSecretSource{}}}},
			sshKeys("Bad_Name", noCloud), sshKeys("keys", noCloud), sshKeys("keys", noCloud)),
			[]string{"Required:spec.accessCredentials[0].sshPublicKey.source.secret", "Required:spec.accessCredentials[1].sshPublicKey.source.secret.secretName",
				"Invalid:spec.accessCredentials[2].sshPublicKey.source.secret.secretName", "Duplicate:spec.accessCredentials[4].sshPublicKey.source.secret.secretName"}},
		{"an empty entry and one with both credentials", creds(kubevirtv1.AccessCredential{},
			kubevirtv1.AccessCredential{SSHPublicKey: sshKeys("a", noCloud).SSHPublicKey, UserPassword: &kubevirtv1.UserPasswordAccessCredential{}}),
			[]string{"Required:spec.accessCredentials[0]", "Invalid:spec.accessCredentials[1]"}},
		{"keys and passwords through the guest agent", creds(
			sshKeys("keys", kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{
				QemuGuestAgent: &kubevirtv1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"fedora", "root"}}}),
			passwords("passwords", true)), nil},
		{"guest agent keys for nobody, for an empty and a twice named user; passwords without the agent", creds(
			sshKeys("a", kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{
				QemuGuestAgent: &kubevirtv1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{}}),
			sshKeys("b", kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod{
				QemuGuestAgent: &kubevirtv1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"", "root", "root"}}}),
			passwords("c", false)),
			[]string{"Required:spec.accessCredentials[0].sshPublicKey.propagationMethod.qemuGuestAgent.users",
				"Required:spec.accessCredentials[1].sshPublicKey.propagationMethod.qemuGuestAgent.users[0]",
				"Duplicate:spec.accessCredentials[1].sshPublicKey.propagationMethod.qemuGuestAgent.users[2]",
				"Required:spec.accessCredentials[2].userPassword.propagationMethod.qemuGuestAgent"}},
	})
}
