package cloudinit

import (
	"encoding/json"
	"fmt"
	"time"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// ConfigDriveLabel is the filesystem label cloud-init's ConfigDrive datasource looks for.
const ConfigDriveLabel = "config-2"

// ConfigDrive file names (OpenStack's "latest" metadata version).
const (
	configDriveUserData    = "openstack/latest/user_data"
	configDriveMetaData    = "openstack/latest/meta_data.json"
	configDriveNetworkData = "openstack/latest/network_data.json"
)

// ConfigDriveISO builds a ConfigDrive disk: meta_data.json always,
// user_data and network_data.json when given.
func ConfigDriveISO(userData, metaData, networkData []byte) ([]byte, error) {
	files := []File{{Path: configDriveMetaData, Data: metaData}}
	if len(userData) > 0 {
		files = append(files, File{Path: configDriveUserData, Data: userData})
	}
	if len(networkData) > 0 {
		files = append(files, File{Path: configDriveNetworkData, Data: networkData})
	}
	img, err := BuildISO(ConfigDriveLabel, files, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("ConfigDrive disk: %w", err)
	}
	return img, nil
}

// configDriveMeta is OpenStack's meta_data.json, limited to what cloud-init reads.
type configDriveMeta struct {
	UUID       string            `json:"uuid"`
	InstanceID string            `json:"instance_id"`
	Name       string            `json:"name"`
	Hostname   string            `json:"hostname"`
	PublicKeys map[string]string `json:"public_keys,omitempty"`
}

// ConfigDriveMetaData is the meta_data.json of vmi. cloud-init takes the
// instance ID from "uuid": the firmware UUID (stable for a VM, as the API
// server derives it from namespace and name), else InstanceID; and the host
// name from "hostname".
//
// The SSH public keys, by name, go into "public_keys", which cloud-init
// installs for the default user.
func ConfigDriveMetaData(vmi *kubevirtv1.VirtualMachineInstance, publicKeys map[string]string) []byte {
	id := InstanceID(vmi)
	uuid := id
	if fw := vmi.Spec.Domain.Firmware; fw != nil && fw.UUID != "" {
		uuid = string(fw.UUID)
	}
	data, _ := json.Marshal(configDriveMeta{UUID: uuid, InstanceID: id, Name: vmi.Name, Hostname: Hostname(vmi), PublicKeys: publicKeys})
	return append(data, '\n')
}
