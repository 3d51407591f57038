package launcherpod

import (
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// Config volumes (configMap, secret, serviceAccount, downwardAPI and sysprep) reach the guest as KubeVirt
// gives them: as an ISO9660 disk holding the volume's files. The kubelet mounts each into the
// compute container as a pod volume of the same name (under ConfigVolumesDir), with the pod's
// own rights (its namespace, its service account), and the launcher builds the disk from the
// mounted files into the disks volume (ConfigDiskPath) before it reports ready, labelled with
// the volume's volumeLabel (DefaultConfigDiskLabel when empty). The node agent never reads them.

const (
	// ConfigVolumesDir is where config volumes are mounted in the compute container.
	ConfigVolumesDir = "/var/run/nativevirt-config"
	// DefaultConfigDiskLabel is a config disk's label when the volume names none (KubeVirt's).
	DefaultConfigDiskLabel = "cfgdata"
	// SysprepDiskLabel is the label of a sysprep volume's disk (KubeVirt's), which must hold
	// autounattend.xml for Windows setup.
	SysprepDiskLabel = "unattendCD"
	// ConfigDiskFile is a config disk's file name in its volume's directory of the disks volume.
	ConfigDiskFile = "config.iso"
	// serviceAccountTokenSeconds is the token's requested lifetime (the kubelet's default for
	// its own projected token): the kubelet renews it in the mounted volume, but the disk holds
	// the token of the guest's start.
	serviceAccountTokenSeconds = 3607
)

// ConfigDiskPath is where the launcher writes the disk of config volume `volume`.
func ConfigDiskPath(volume string) string {
	return path.Join(DisksDir, volume, ConfigDiskFile)
}

// ConfigVolumePath is where config volume `volume` is mounted in the compute container.
func ConfigVolumePath(volume string) string {
	return path.Join(ConfigVolumesDir, volume)
}

// addConfigVolumes adds the instance's config volumes to the pod, mounts them into the compute
// container and has the launcher build their disks (--config-disk <volume>=<label>).
func addConfigVolumes(pod *corev1.Pod, spec *kubevirtv1.VirtualMachineInstanceSpec) error {
	compute := &pod.Spec.Containers[0]
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if !kubevirtv1.IsConfigVolume(&v.VolumeSource) {
			continue
		}
		if err := checkNotReserved(v.Name); err != nil {
			return err
		}
		source, label := configVolumeSource(v)
		if sa := v.ServiceAccount; sa != nil {
			// The token is the pod's: the launcher pod runs as that service account.
			pod.Spec.ServiceAccountName = sa.ServiceAccountName
		}
		if label == "" {
			label = DefaultConfigDiskLabel
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: v.Name, VolumeSource: source})
		compute.VolumeMounts = append(compute.VolumeMounts, corev1.VolumeMount{
			Name: v.Name, MountPath: ConfigVolumePath(v.Name), ReadOnly: true,
		})
		if kubevirtv1.IsACPITableVolume(spec, v.Name) {
			// QEMU reads the table from the mount; the guest gets no disk of it.
			continue
		}
		compute.Command = append(compute.Command, "--config-disk", v.Name+"="+label)
	}
	return nil
}

// configVolumeSource is the pod volume behind a config volume, and the disk's label.
func configVolumeSource(v *kubevirtv1.Volume) (corev1.VolumeSource, string) {
	switch {
	case v.ConfigMap != nil:
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: v.ConfigMap.LocalObjectReference, Optional: v.ConfigMap.Optional,
		}}, v.ConfigMap.VolumeLabel
	case v.Secret != nil:
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: v.Secret.SecretName, Optional: v.Secret.Optional,
		}}, v.Secret.VolumeLabel
	case v.Sysprep != nil:
		if cm := v.Sysprep.ConfigMap; cm != nil {
			return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: *cm}}, SysprepDiskLabel
		}
		name := ""
		if v.Sysprep.Secret != nil {
			name = v.Sysprep.Secret.Name
		}
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}, SysprepDiskLabel
	case v.DownwardAPI != nil:
		items := make([]corev1.DownwardAPIVolumeFile, len(v.DownwardAPI.Fields))
		for i := range v.DownwardAPI.Fields {
			v.DownwardAPI.Fields[i].DeepCopyInto(&items[i])
		}
		return corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: items}}, v.DownwardAPI.VolumeLabel
	default:
		// What a pod's automounted token volume holds: token, ca.crt and namespace.
		return corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](serviceAccountTokenSeconds)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		}}}, ""
	}
}

// reservedVolumes are the launcher pod's own volumes, which no volume of an instance may shadow.
var reservedVolumes = []string{PrivateVolume, DisksVolume, BinVolume}

// checkNotReserved refuses an instance volume named like one of the pod's own.
func checkNotReserved(volume string) error {
	for _, r := range reservedVolumes {
		if volume == r {
			return fmt.Errorf("volume name %q is reserved for the launcher pod", volume)
		}
	}
	return nil
}
