package cloudinit

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// NoCloudLabel is the filesystem label cloud-init's NoCloud datasource looks for.
const NoCloudLabel = "cidata"

// NoCloud file names.
const (
	noCloudUserData    = "user-data"
	noCloudMetaData    = "meta-data"
	noCloudNetworkData = "network-config"
)

// NoCloudISO builds a NoCloud disk: user-data and meta-data (both always
// present, as cloud-init requires; empty user data is an empty file) and
// network-config when networkData is not empty.
func NoCloudISO(userData, metaData, networkData []byte) ([]byte, error) {
	files := []File{
		{Path: noCloudUserData, Data: userData},
		{Path: noCloudMetaData, Data: metaData},
	}
	if len(networkData) > 0 {
		files = append(files, File{Path: noCloudNetworkData, Data: networkData})
	}
	img, err := BuildISO(NoCloudLabel, files, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("NoCloud disk: %w", err)
	}
	return img, nil
}

// InstanceID is the cloud-init instance ID of vmi: <name>.<namespace>, as
// KubeVirt gives it. It stays the same across restarts of a VM, so
// cloud-init runs its once-per-instance steps once.
func InstanceID(vmi *kubevirtv1.VirtualMachineInstance) string {
	return vmi.Name + "." + vmi.Namespace
}

// Hostname is the guest's host name: spec.hostname, else the instance name.
func Hostname(vmi *kubevirtv1.VirtualMachineInstance) string {
	if vmi.Spec.Hostname != "" {
		return vmi.Spec.Hostname
	}
	return vmi.Name
}

// NoCloudMetaData is the meta-data file of vmi: its instance ID and host
// name, and the SSH public keys by name (cloud-init's public-keys, which it
// installs for the default user). It is YAML; the values are written as JSON
// strings, which YAML reads as double-quoted scalars, so no name or key can
// break the format.
func NoCloudMetaData(vmi *kubevirtv1.VirtualMachineInstance, publicKeys map[string]string) []byte {
	id, _ := json.Marshal(InstanceID(vmi))
	host, _ := json.Marshal(Hostname(vmi))
	var b strings.Builder
	fmt.Fprintf(&b, "instance-id: %s\nlocal-hostname: %s\n", id, host)
	if len(publicKeys) > 0 {
		b.WriteString("public-keys:\n")
		for _, name := range slices.Sorted(maps.Keys(publicKeys)) {
			k, _ := json.Marshal(name)
			v, _ := json.Marshal(publicKeys[name])
			fmt.Fprintf(&b, "  %s: %s\n", k, v)
		}
	}
	return []byte(b.String())
}
