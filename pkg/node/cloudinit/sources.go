package cloudinit

import (
	"encoding/base64"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// Kind is the cloud-init datasource of a volume.
type Kind string

// Datasource kinds.
const (
	// NoCloud is a cloudInitNoCloud volume.
	NoCloud Kind = "NoCloud"
	// ConfigDrive is a cloudInitConfigDrive volume.
	ConfigDrive Kind = "ConfigDrive"
)

// Secret keys holding cloud-init data, as KubeVirt reads them (the first
// present wins).
var (
	userDataKeys    = []string{"userdata", "userData"}
	networkDataKeys = []string{"networkdata", "networkData"}
)

// Source is a cloud-init volume of an instance. Inline data is decoded;
// data held in secrets is named by UserDataSecret and NetworkDataSecret
// until Resolve reads it.
type Source struct {
	// Volume is the volume's name.
	Volume string
	// Kind is NoCloud or ConfigDrive.
	Kind Kind
	// UserData is the user data (nil when none, or not resolved yet).
	UserData []byte
	// NetworkData is the network data (nil when none, or not resolved yet).
	NetworkData []byte
	// UserDataSecret names the secret holding the user data.
	UserDataSecret string
	// NetworkDataSecret names the secret holding the network data.
	NetworkDataSecret string
}

// fields are the data fields common to both datasources.
type fields struct {
	userData, userDataBase64, userDataSecret          string
	networkData, networkDataBase64, networkDataSecret string
}

// Sources lists the cloud-init volumes of vmi, in volume order, with their
// inline data decoded. A volume that sets its user (or network) data more
// than once, or with bad base64, is an error.
func Sources(vmi *kubevirtv1.VirtualMachineInstance) ([]Source, error) {
	if vmi == nil {
		return nil, fmt.Errorf("cloud-init sources: nil VirtualMachineInstance")
	}
	var out []Source
	for _, vol := range vmi.Spec.Volumes {
		var (
			kind Kind
			f    fields
		)
		switch {
		case vol.CloudInitNoCloud != nil:
			s := vol.CloudInitNoCloud
			kind = NoCloud
			f = fields{s.UserData, s.UserDataBase64, secretName(s.UserDataSecretRef), s.NetworkData, s.NetworkDataBase64, secretName(s.NetworkDataSecretRef)}
		case vol.CloudInitConfigDrive != nil:
			s := vol.CloudInitConfigDrive
			kind = ConfigDrive
			f = fields{s.UserData, s.UserDataBase64, secretName(s.UserDataSecretRef), s.NetworkData, s.NetworkDataBase64, secretName(s.NetworkDataSecretRef)}
		default:
			continue
		}
		src := Source{Volume: vol.Name, Kind: kind, UserDataSecret: f.userDataSecret, NetworkDataSecret: f.networkDataSecret}
		var err error
		if src.UserData, err = inline("user", f.userData, f.userDataBase64, f.userDataSecret); err != nil {
			return nil, fmt.Errorf("volume %s: %w", vol.Name, err)
		}
		if src.NetworkData, err = inline("network", f.networkData, f.networkDataBase64, f.networkDataSecret); err != nil {
			return nil, fmt.Errorf("volume %s: %w", vol.Name, err)
		}
		out = append(out, src)
	}
	return out, nil
}

// secretName is the name of a secret reference, or "".
func secretName(ref *corev1.LocalObjectReference) string {
	if ref == nil {
		return ""
	}
	return ref.Name
}

// inline decodes the inline form of one kind of data; at most one of the
// plain text, the base64 text and the secret may be set.
func inline(what, plain, b64, secret string) ([]byte, error) {
	set := 0
	for _, v := range []string{plain, b64, secret} {
		if v != "" {
			set++
		}
	}
	if set > 1 {
		return nil, fmt.Errorf("%s data is set more than once (%sData, %sDataBase64, secret reference)", what, what, what)
	}
	switch {
	case plain != "":
		return []byte(plain), nil
	case b64 != "":
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
		if err != nil {
			return nil, fmt.Errorf("%sDataBase64 is not valid base64: %v", what, err)
		}
		return data, nil
	}
	return nil, nil
}

// SecretGetter returns the data of a secret in the instance's namespace.
type SecretGetter func(name string) (map[string][]byte, error)

// Resolve reads the data held in secrets through get and returns the
// source with UserData and NetworkData filled in.
func (s Source) Resolve(get SecretGetter) (Source, error) {
	if s.UserDataSecret == "" && s.NetworkDataSecret == "" {
		return s, nil
	}
	if get == nil {
		return s, fmt.Errorf("volume %s: cloud-init data is in secrets but no secret getter was given", s.Volume)
	}
	if s.UserDataSecret != "" {
		data, err := fromSecret(get, s.UserDataSecret, userDataKeys)
		if err != nil {
			return s, fmt.Errorf("volume %s: user data: %w", s.Volume, err)
		}
		s.UserData, s.UserDataSecret = data, ""
	}
	if s.NetworkDataSecret != "" {
		data, err := fromSecret(get, s.NetworkDataSecret, networkDataKeys)
		if err != nil {
			return s, fmt.Errorf("volume %s: network data: %w", s.Volume, err)
		}
		s.NetworkData, s.NetworkDataSecret = data, ""
	}
	return s, nil
}

// fromSecret reads the first of keys from the named secret.
func fromSecret(get SecretGetter, name string, keys []string) ([]byte, error) {
	data, err := get(name)
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	for _, k := range keys {
		if v, ok := data[k]; ok {
			return v, nil
		}
	}
	return nil, fmt.Errorf("secret %s has none of the keys %s", name, strings.Join(keys, ", "))
}

// ISO builds the disk image of the source for vmi, with meta data derived
// from the instance. Data still held in secrets must be resolved first.
func (s Source) ISO(vmi *kubevirtv1.VirtualMachineInstance) ([]byte, error) {
	if vmi == nil {
		return nil, fmt.Errorf("volume %s: nil VirtualMachineInstance", s.Volume)
	}
	if s.UserDataSecret != "" || s.NetworkDataSecret != "" {
		return nil, fmt.Errorf("volume %s: cloud-init data in secrets is not resolved", s.Volume)
	}
	switch s.Kind {
	case NoCloud:
		return NoCloudISO(s.UserData, NoCloudMetaData(vmi), s.NetworkData)
	case ConfigDrive:
		return ConfigDriveISO(s.UserData, ConfigDriveMetaData(vmi), s.NetworkData)
	}
	return nil, fmt.Errorf("volume %s: unknown cloud-init kind %q", s.Volume, s.Kind)
}
