package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// source0 replaces the source of volumes[0] (backing disks[0]).
func source0(src kubevirtv1.VolumeSource) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
	return func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.Volumes[0].VolumeSource = src }
}

// noCloud replaces the cloud-init source of volumes[1].
func noCloud(c kubevirtv1.CloudInitNoCloudSource) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
	return func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.Volumes[1].CloudInitNoCloud = &c }
}

func TestValidateVolumes(t *testing.T) {
	runSpecCases(t, []specCase{
		{"duplicate volume", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Volumes = append(s.Volumes, s.Volumes[0])
		}, []string{"Duplicate:spec.volumes[2].name"}},
		{"volume name not a DNS label", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Volumes[0].Name = "Root.Disk"
		}, []string{"Invalid:spec.volumes[0].name", "Invalid:spec.domain.devices.disks[0].name"}},
		{"volume without name", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Volumes[0].Name = ""
		}, []string{"Required:spec.volumes[0].name", "Invalid:spec.domain.devices.disks[0].name"}},
		{"no source", source0(kubevirtv1.VolumeSource{}), []string{"Required:spec.volumes[0]"}},
		{"two sources", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Volumes[0].EmptyDisk = &kubevirtv1.EmptyDiskSource{Capacity: q("1Gi")}
		}, []string{"Invalid:spec.volumes[0]"}},
		{"container disk with path and policy", source0(kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{
			Image: "registry:5000/disk", Path: "/disk/fedora.qcow2", ImagePullPolicy: corev1.PullAlways}}), nil},
		{"container disk without image", source0(kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{}}),
			[]string{"Required:spec.volumes[0].containerDisk.image"}},
		{"container disk relative path", source0(kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{
			Image: "i", Path: "disk/x.img"}}), []string{"Invalid:spec.volumes[0].containerDisk.path"}},
		{"container disk pull policy", source0(kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{
			Image: "i", ImagePullPolicy: "Often"}}), []string{"NotSupported:spec.volumes[0].containerDisk.imagePullPolicy"}},
		{"empty disk", source0(kubevirtv1.VolumeSource{EmptyDisk: &kubevirtv1.EmptyDiskSource{Capacity: q("2Gi")}}), nil},
		{"empty disk without capacity", source0(kubevirtv1.VolumeSource{EmptyDisk: &kubevirtv1.EmptyDiskSource{}}),
			[]string{"Invalid:spec.volumes[0].emptyDisk.capacity"}},
		{"empty disk negative", source0(kubevirtv1.VolumeSource{EmptyDisk: &kubevirtv1.EmptyDiskSource{Capacity: q("-1Gi")}}),
			[]string{"Invalid:spec.volumes[0].emptyDisk.capacity"}},
		{"claim", source0(kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
			PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}), nil},
		{"claim without name", source0(kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{}}),
			[]string{"Required:spec.volumes[0].persistentVolumeClaim.claimName"}},
		{"ephemeral", source0(kubevirtv1.VolumeSource{Ephemeral: &kubevirtv1.EphemeralVolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "golden"}}}), nil},
		{"ephemeral without claim", source0(kubevirtv1.VolumeSource{Ephemeral: &kubevirtv1.EphemeralVolumeSource{}}),
			[]string{"Required:spec.volumes[0].ephemeral.persistentVolumeClaim"}},
		{"ephemeral without claim name", source0(kubevirtv1.VolumeSource{Ephemeral: &kubevirtv1.EphemeralVolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{}}}),
			[]string{"Required:spec.volumes[0].ephemeral.persistentVolumeClaim.claimName"}},
	})
}

// TestValidateHostDisk: host disks are refused (Forbidden), and their fields are still checked so
// the message is complete once they are allowed.
func TestValidateHostDisk(t *testing.T) {
	host := func(h kubevirtv1.HostDisk) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		return source0(kubevirtv1.VolumeSource{HostDisk: &h})
	}
	runSpecCases(t, []specCase{
		{"existing image", host(kubevirtv1.HostDisk{Path: "/var/lib/images/a.img", Type: kubevirtv1.HostDiskExists}), []string{"Forbidden:spec.volumes[0].hostDisk"}},
		{"created image", host(kubevirtv1.HostDisk{Path: "/var/lib/images/b.img", Type: kubevirtv1.HostDiskExistsOrCreate,
			Capacity: q("1Gi")}), []string{"Forbidden:spec.volumes[0].hostDisk"}},
		{"no path, no type", host(kubevirtv1.HostDisk{}),
			[]string{"Forbidden:spec.volumes[0].hostDisk", "Required:spec.volumes[0].hostDisk.path", "Required:spec.volumes[0].hostDisk.type"}},
		{"relative path", host(kubevirtv1.HostDisk{Path: "images/a.img", Type: kubevirtv1.HostDiskExists}),
			[]string{"Forbidden:spec.volumes[0].hostDisk", "Invalid:spec.volumes[0].hostDisk.path"}},
		{"path escaping with ..", host(kubevirtv1.HostDisk{Path: "/var/lib/../../etc/shadow", Type: kubevirtv1.HostDiskExists}),
			[]string{"Forbidden:spec.volumes[0].hostDisk", "Invalid:spec.volumes[0].hostDisk.path"}},
		{"unknown type", host(kubevirtv1.HostDisk{Path: "/a.img", Type: "Directory"}),
			[]string{"Forbidden:spec.volumes[0].hostDisk", "NotSupported:spec.volumes[0].hostDisk.type"}},
		{"create without capacity", host(kubevirtv1.HostDisk{Path: "/a.img", Type: kubevirtv1.HostDiskExistsOrCreate}),
			[]string{"Forbidden:spec.volumes[0].hostDisk", "Required:spec.volumes[0].hostDisk.capacity"}},
		{"negative capacity", host(kubevirtv1.HostDisk{Path: "/a.img", Type: kubevirtv1.HostDiskExists, Capacity: q("-1")}),
			[]string{"Forbidden:spec.volumes[0].hostDisk", "Invalid:spec.volumes[0].hostDisk.capacity"}},
	})
}

func TestValidateCloudInit(t *testing.T) {
	const b64 = "I2Nsb3VkLWNvbmZpZwo=" // "#cloud-config\n"
	secret := &corev1.LocalObjectReference{Name: "userdata"}
	nc := "spec.volumes[1].cloudInitNoCloud"
	runSpecCases(t, []specCase{
		{"base64 user data", noCloud(kubevirtv1.CloudInitNoCloudSource{UserDataBase64: b64}), nil},
		{"secret user data", noCloud(kubevirtv1.CloudInitNoCloudSource{UserDataSecretRef: secret}), nil},
		{"network data only", noCloud(kubevirtv1.CloudInitNoCloudSource{NetworkData: "version: 2\n"}), nil},
		{"user and network data", noCloud(kubevirtv1.CloudInitNoCloudSource{UserData: "#cloud-config\n",
			NetworkDataBase64: b64}), nil},
		{"no data", noCloud(kubevirtv1.CloudInitNoCloudSource{}), []string{"Required:" + nc}},
		{"user data twice", noCloud(kubevirtv1.CloudInitNoCloudSource{UserData: "#cloud-config\n", UserDataBase64: b64}),
			[]string{"Invalid:" + nc}},
		{"user data three times", noCloud(kubevirtv1.CloudInitNoCloudSource{UserData: "x", UserDataBase64: b64, UserDataSecretRef: secret}),
			[]string{"Invalid:" + nc}},
		{"network data twice", noCloud(kubevirtv1.CloudInitNoCloudSource{NetworkData: "x",
			NetworkDataSecretRef: &corev1.LocalObjectReference{Name: "net"}}), []string{"Invalid:" + nc}},
		{"bad base64", noCloud(kubevirtv1.CloudInitNoCloudSource{UserDataBase64: "not base64!"}),
			[]string{"Invalid:" + nc + ".userDataBase64"}},
		{"bad network base64", noCloud(kubevirtv1.CloudInitNoCloudSource{UserData: "x", NetworkDataBase64: "%%%"}),
			[]string{"Invalid:" + nc + ".networkDataBase64"}},
		{"secret without name", noCloud(kubevirtv1.CloudInitNoCloudSource{UserDataSecretRef: &corev1.LocalObjectReference{}}),
			[]string{"Required:" + nc + ".secretRef.name"}},
		{"large user data (no 2 KiB cap)", noCloud(kubevirtv1.CloudInitNoCloudSource{
			UserData: "#cloud-config\n" + strings.Repeat("#", 200<<10)}), nil},
		{"user data at the cap", noCloud(kubevirtv1.CloudInitNoCloudSource{UserData: strings.Repeat("#", MaxCloudInitSize)}), nil},
		{"user data over the cap", noCloud(kubevirtv1.CloudInitNoCloudSource{UserData: strings.Repeat("#", MaxCloudInitSize+1)}),
			[]string{"TooLong:" + nc}},
		{"user and network data over the cap together", noCloud(kubevirtv1.CloudInitNoCloudSource{
			UserData: strings.Repeat("#", MaxCloudInitSize/2+1), NetworkData: strings.Repeat("#", MaxCloudInitSize/2)}),
			[]string{"TooLong:" + nc}},
		{"config drive", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Volumes[1].VolumeSource = kubevirtv1.VolumeSource{CloudInitConfigDrive: &kubevirtv1.CloudInitConfigDriveSource{UserDataBase64: b64}}
		}, nil},
		{"config drive user data twice", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Volumes[1].VolumeSource = kubevirtv1.VolumeSource{CloudInitConfigDrive: &kubevirtv1.CloudInitConfigDriveSource{
				UserData: "x", UserDataSecretRef: secret}}
		}, []string{"Invalid:spec.volumes[1].cloudInitConfigDrive"}},
		{"two cloud-init volumes", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Volumes = append(s.Volumes, kubevirtv1.Volume{Name: "cloudinit2", VolumeSource: kubevirtv1.VolumeSource{
				CloudInitConfigDrive: &kubevirtv1.CloudInitConfigDriveSource{UserData: "x"}}})
		}, []string{"Invalid:spec.volumes[2]"}},
	})
}
