package validation

import (
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// validateAccessCredentials checks spec.accessCredentials: each entry one credential from a
// secret (each secret once), SSH keys propagated by one method (the cloud-init volume a noCloud
// or configDrive propagation writes the keys into, the users whose keys the guest agent sets),
// passwords by the guest agent.
func validateAccessCredentials(spec *kubevirtv1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	noCloud, configDrive := false, false
	for _, v := range spec.Volumes {
		noCloud = noCloud || v.CloudInitNoCloud != nil
		configDrive = configDrive || v.CloudInitConfigDrive != nil
	}
	secrets := nameSet{}
	for i := range spec.AccessCredentials {
		c := &spec.AccessCredentials[i]
		p := fldPath.Child("accessCredentials").Index(i)
		var secret *kubevirtv1.AccessCredentialSecretSource
		var secretPath *field.Path
		switch {
		case c.SSHPublicKey == nil && c.UserPassword == nil:
			errs = append(errs, field.Required(p, "one of sshPublicKey and userPassword must be set"))
			continue
		case c.SSHPublicKey != nil && c.UserPassword != nil:
			errs = append(errs, field.Invalid(p, "sshPublicKey, userPassword", "exactly one of sshPublicKey and userPassword may be set: an entry is one credential"))
			continue
		case c.SSHPublicKey != nil:
			secret, secretPath = c.SSHPublicKey.Source.Secret, p.Child("sshPublicKey", "source", "secret")
			errs = append(errs, validateKeyPropagation(&c.SSHPublicKey.PropagationMethod, noCloud, configDrive,
				p.Child("sshPublicKey", "propagationMethod"))...)
		default:
			secret, secretPath = c.UserPassword.Source.Secret, p.Child("userPassword", "source", "secret")
			if c.UserPassword.PropagationMethod.QemuGuestAgent == nil {
				errs = append(errs, field.Required(p.Child("userPassword", "propagationMethod", "qemuGuestAgent"),
					"passwords are set by the guest agent"))
			}
		}
		if secret == nil {
			errs = append(errs, field.Required(secretPath, "the secret holding the credential"))
			continue
		}
		namePath := secretPath.Child("secretName")
		if secret.SecretName == "" {
			errs = append(errs, field.Required(namePath, ""))
			continue
		}
		for _, msg := range content.IsDNS1123Subdomain(secret.SecretName) {
			errs = append(errs, field.Invalid(namePath, secret.SecretName, msg))
		}
		errs = appendErr(errs, secrets.add(secret.SecretName, namePath))
	}
	return errs
}

// validateKeyPropagation requires exactly one propagation method and, for the cloud-init ones,
// a volume of that kind.
func validateKeyPropagation(m *kubevirtv1.SSHPublicKeyAccessCredentialPropagationMethod, noCloud, configDrive bool, p *field.Path) field.ErrorList {
	set := 0
	for _, b := range []bool{m.NoCloud != nil, m.ConfigDrive != nil, m.QemuGuestAgent != nil} {
		if b {
			set++
		}
	}
	switch {
	case set == 0:
		return field.ErrorList{field.Required(p, "one of noCloud, configDrive and qemuGuestAgent must be set")}
	case set > 1:
		return field.ErrorList{field.Invalid(p, set, "exactly one of noCloud, configDrive and qemuGuestAgent must be set")}
	case m.NoCloud != nil && !noCloud:
		return field.ErrorList{field.Invalid(p.Child("noCloud"), "{}", "the keys go into the meta-data of a cloudInitNoCloud volume, and the instance has none")}
	case m.ConfigDrive != nil && !configDrive:
		return field.ErrorList{field.Invalid(p.Child("configDrive"), "{}", "the keys go into the meta-data of a cloudInitConfigDrive volume, and the instance has none")}
	case m.QemuGuestAgent != nil:
		usersPath := p.Child("qemuGuestAgent", "users")
		if len(m.QemuGuestAgent.Users) == 0 {
			return field.ErrorList{field.Required(usersPath, "the guest users whose authorized keys the guest agent sets")}
		}
		var errs field.ErrorList
		users := nameSet{}
		for i, u := range m.QemuGuestAgent.Users {
			if u == "" {
				errs = append(errs, field.Required(usersPath.Index(i), ""))
			}
			errs = appendErr(errs, users.add(u, usersPath.Index(i)))
		}
		return errs
	}
	return nil
}
