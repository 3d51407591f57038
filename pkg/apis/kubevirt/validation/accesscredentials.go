package validation

import (
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// validateAccessCredentials checks spec.accessCredentials: each entry one credential from a
// secret (each secret once), SSH keys propagated by one method, and the cloud-init volume a
// noCloud or configDrive propagation writes the keys into (its meta-data).
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
		errs = append(errs, check(unsupportedAccessCredentialFields, c, p)...)
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
	}
	return nil
}
