package v1

// AccessCredential injects credentials into the guest; exactly one member is set.
type AccessCredential struct {
	// SSHPublicKey injects SSH public keys.
	// +optional
	SSHPublicKey *SSHPublicKeyAccessCredential `json:"sshPublicKey,omitempty"`
	// UserPassword sets user passwords.
	// +optional
	UserPassword *UserPasswordAccessCredential `json:"userPassword,omitempty"`
}

// SSHPublicKeyAccessCredential injects SSH public keys taken from a secret.
type SSHPublicKeyAccessCredential struct {
	// Source holds the keys.
	Source SSHPublicKeyAccessCredentialSource `json:"source"`
	// PropagationMethod says how the keys reach the guest.
	PropagationMethod SSHPublicKeyAccessCredentialPropagationMethod `json:"propagationMethod"`
}

// SSHPublicKeyAccessCredentialSource is where SSH public keys come from.
type SSHPublicKeyAccessCredentialSource struct {
	// Secret whose values are public keys.
	// +optional
	Secret *AccessCredentialSecretSource `json:"secret,omitempty"`
}

// AccessCredentialSecretSource names a secret in the guest's namespace.
type AccessCredentialSecretSource struct {
	// SecretName names the secret.
	SecretName string `json:"secretName"`
}

// SSHPublicKeyAccessCredentialPropagationMethod says how SSH keys reach the guest; exactly one member is set.
type SSHPublicKeyAccessCredentialPropagationMethod struct {
	// ConfigDrive passes the keys through the cloud-init ConfigDrive metadata.
	// +optional
	ConfigDrive *ConfigDriveSSHPublicKeyAccessCredentialPropagation `json:"configDrive,omitempty"`
	// NoCloud passes the keys through the cloud-init NoCloud metadata.
	// +optional
	NoCloud *NoCloudSSHPublicKeyAccessCredentialPropagation `json:"noCloud,omitempty"`
	// QemuGuestAgent writes the keys through the guest agent, at run time.
	// +optional
	QemuGuestAgent *QemuGuestAgentSSHPublicKeyAccessCredentialPropagation `json:"qemuGuestAgent,omitempty"`
}

// ConfigDriveSSHPublicKeyAccessCredentialPropagation selects ConfigDrive propagation.
type ConfigDriveSSHPublicKeyAccessCredentialPropagation struct{}

// NoCloudSSHPublicKeyAccessCredentialPropagation selects NoCloud propagation.
type NoCloudSSHPublicKeyAccessCredentialPropagation struct{}

// QemuGuestAgentSSHPublicKeyAccessCredentialPropagation writes SSH keys through the guest agent.
type QemuGuestAgentSSHPublicKeyAccessCredentialPropagation struct {
	// Users whose authorized_keys receive the keys.
	// +listType=atomic
	Users []string `json:"users"`
}

// UserPasswordAccessCredential sets user passwords taken from a secret.
type UserPasswordAccessCredential struct {
	// Source holds the passwords (key: user name).
	Source UserPasswordAccessCredentialSource `json:"source"`
	// PropagationMethod says how the passwords reach the guest.
	PropagationMethod UserPasswordAccessCredentialPropagationMethod `json:"propagationMethod"`
}

// UserPasswordAccessCredentialSource is where passwords come from.
type UserPasswordAccessCredentialSource struct {
	// Secret mapping user names to passwords.
	// +optional
	Secret *AccessCredentialSecretSource `json:"secret,omitempty"`
}

// UserPasswordAccessCredentialPropagationMethod says how passwords reach the guest.
type UserPasswordAccessCredentialPropagationMethod struct {
	// QemuGuestAgent sets the passwords through the guest agent.
	// +optional
	QemuGuestAgent *QemuGuestAgentUserPasswordAccessCredentialPropagation `json:"qemuGuestAgent,omitempty"`
}

// QemuGuestAgentUserPasswordAccessCredentialPropagation selects guest agent propagation.
type QemuGuestAgentUserPasswordAccessCredentialPropagation struct{}
