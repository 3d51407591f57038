package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// addVolume appends a volume (with no disk: config volumes need none to be valid).
func addVolume(name string, src kubevirtv1.VolumeSource) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
	return func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		s.Volumes = append(s.Volumes, kubevirtv1.Volume{Name: name, VolumeSource: src})
	}
}

func TestValidateConfigVolumes(t *testing.T) {
	cm := func(name, label string) kubevirtv1.VolumeSource {
		return kubevirtv1.VolumeSource{ConfigMap: &kubevirtv1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, VolumeLabel: label}}
	}
	sa := func(name string) kubevirtv1.VolumeSource {
		return kubevirtv1.VolumeSource{ServiceAccount: &kubevirtv1.ServiceAccountVolumeSource{ServiceAccountName: name}}
	}
	downward := func(files ...corev1.DownwardAPIVolumeFile) kubevirtv1.VolumeSource {
		return kubevirtv1.VolumeSource{DownwardAPI: &kubevirtv1.DownwardAPIVolumeSource{Fields: files}}
	}
	field := func(p, fieldPath string) corev1.DownwardAPIVolumeFile {
		return corev1.DownwardAPIVolumeFile{Path: p, FieldRef: &corev1.ObjectFieldSelector{FieldPath: fieldPath}}
	}
	runSpecCases(t, []specCase{
		{"every kind", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			addVolume("cm", cm("app", "OEMDRV"))(s)
			addVolume("sec", kubevirtv1.VolumeSource{Secret: &kubevirtv1.SecretVolumeSource{SecretName: "db"}})(s)
			addVolume("sa", sa("default"))(s)
			addVolume("dw", downward(field("labels", "metadata.labels"), field("zone", "metadata.labels['zone']"),
				corev1.DownwardAPIVolumeFile{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}))(s)
		}, nil},
		{"nothing named", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			addVolume("cm", cm("", ""))(s)
			addVolume("sec", kubevirtv1.VolumeSource{Secret: &kubevirtv1.SecretVolumeSource{}})(s)
			addVolume("sa", sa(""))(s)
		}, []string{"Required:spec.volumes[2].configMap.name", "Required:spec.volumes[3].secret.secretName",
			"Required:spec.volumes[4].serviceAccount.serviceAccountName"}},
		{"a label an ISO cannot carry", addVolume("cm", cm("app", strings.Repeat("L", 33))),
			[]string{"TooLong:spec.volumes[2].configMap.volumeLabel"}},
		{"two service accounts", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			addVolume("sa1", sa("default"))(s)
			addVolume("sa2", sa("builder"))(s)
		}, []string{"Invalid:spec.volumes[3].serviceAccount"}},
		{"a service account name that is not one", addVolume("sa", sa("Not_Valid")),
			[]string{"Invalid:spec.volumes[2].serviceAccount.serviceAccountName"}},
		{"sysprep from a config map and from a secret", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			addVolume("sp1", kubevirtv1.VolumeSource{Sysprep: &kubevirtv1.SysprepSource{ConfigMap: &corev1.LocalObjectReference{Name: "unattend"}}})(s)
			addVolume("sp2", kubevirtv1.VolumeSource{Sysprep: &kubevirtv1.SysprepSource{Secret: &corev1.LocalObjectReference{Name: "unattend"}}})(s)
		}, nil},
		{"sysprep from nothing, from both, from an unnamed config map", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			addVolume("sp1", kubevirtv1.VolumeSource{Sysprep: &kubevirtv1.SysprepSource{}})(s)
			addVolume("sp2", kubevirtv1.VolumeSource{Sysprep: &kubevirtv1.SysprepSource{
				ConfigMap: &corev1.LocalObjectReference{Name: "a"}, Secret: &corev1.LocalObjectReference{Name: "b"}}})(s)
			addVolume("sp3", kubevirtv1.VolumeSource{Sysprep: &kubevirtv1.SysprepSource{ConfigMap: &corev1.LocalObjectReference{}}})(s)
		}, []string{"Required:spec.volumes[2].sysprep", "Invalid:spec.volumes[3].sysprep", "Required:spec.volumes[4].sysprep.configMap.name"}},
		{"bad downward API files", addVolume("dw", downward(
			field("", "metadata.name"), field("../etc/passwd", "metadata.name"), field("spec", "spec.nodeName"),
			corev1.DownwardAPIVolumeFile{Path: "none"}, field("dup", "metadata.uid"), field("dup", "metadata.uid"))),
			[]string{"Required:spec.volumes[2].downwardAPI.fields[0].path", "Invalid:spec.volumes[2].downwardAPI.fields[1].path",
				"NotSupported:spec.volumes[2].downwardAPI.fields[2].fieldRef.fieldPath", "Required:spec.volumes[2].downwardAPI.fields[3]",
				"Duplicate:spec.volumes[2].downwardAPI.fields[5].path"}},
	})
}
