package launcherpod

import (
	"errors"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/multus"
)

// Config holds what the controller decides for every launcher pod.
type Config struct {
	// LauncherImage runs the compute container and the copy of the copy-disk binary;
	// DefaultLauncherImage when empty.
	LauncherImage string
	// LauncherPullPolicy is the launcher image's pull policy; IfNotPresent when empty (images
	// imported locally are never pulled).
	LauncherPullPolicy corev1.PullPolicy
	// UseEmulation runs guests under QEMU TCG: the pod then asks for no KVM device.
	UseEmulation bool
	// CPUAllocationRatio is KubeVirt's cpuAllocationRatio: a compute container whose domain
	// names no CPU request or limit requests vCPUs × 1000m / CPUAllocationRatio;
	// DefaultCPUAllocationRatio (10) when below 1.
	CPUAllocationRatio int
	// Claims finds the PersistentVolumeClaims of persistentVolumeClaim and ephemeral volumes
	// (their volume mode decides between a mount and a block device).
	Claims ClaimLookup
}

func (c *Config) launcherImage() string {
	if c.LauncherImage == "" {
		return DefaultLauncherImage
	}
	return c.LauncherImage
}

func (c *Config) launcherPullPolicy() corev1.PullPolicy {
	if c.LauncherPullPolicy == "" {
		return corev1.PullIfNotPresent
	}
	return c.LauncherPullPolicy
}

// launcherCapabilities are exactly what a root libvirtd needs once everything else is dropped,
// and NET_BIND_SERVICE for the launcher's DHCP server (port 67) of the masquerade binding; all
// are allowed by Pod Security baseline.
var launcherCapabilities = []corev1.Capability{"DAC_OVERRIDE", "SETGID", "SETUID", "SETPCAP", "NET_BIND_SERVICE"}

// GracePeriodSeconds is the instance's termination grace period (30 s when unset): the time the
// launcher gives the guest to shut down.
func GracePeriodSeconds(vmi *kubevirtv1.VirtualMachineInstance) int64 {
	if g := vmi.Spec.TerminationGracePeriodSeconds; g != nil && *g >= 0 {
		return *g
	}
	return kubevirtv1.DefaultGracePeriodSeconds
}

// Render returns the launcher pod of vmi. The pod has no name (generateName
// virt-launcher-<vmi>-) and is owned by the instance, so that the garbage collector removes it
// with the instance. It fails only for an instance no valid pod can be built for (no memory).
func Render(vmi *kubevirtv1.VirtualMachineInstance, cfg Config) (*corev1.Pod, error) {
	if vmi == nil {
		return nil, errors.New("no instance")
	}
	resources, err := computeResources(&vmi.Spec, cfg.UseEmulation, cfg.CPUAllocationRatio)
	if err != nil {
		return nil, err
	}
	grace := GracePeriodSeconds(vmi)
	spec := &vmi.Spec

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "virt-launcher-" + vmi.Name + "-",
			Namespace:    vmi.Namespace,
			Labels:       podLabels(vmi),
			Annotations: map[string]string{
				kubevirtv1.DomainAnnotation: vmi.Name,
				// kubectl logs/exec without -c: the launcher, not a copy container.
				defaultContainerAnnotation: ComputeContainerName,
			},
			OwnerReferences: []metav1.OwnerReference{OwnerReference(vmi)},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To(grace + PodGracePeriodSlack),
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			NodeSelector:                  nodeSelector(spec),
			Affinity:                      spec.Affinity.DeepCopy(),
			Tolerations:                   copyTolerations(spec.Tolerations),
			TopologySpreadConstraints:     copySpread(spec.TopologySpreadConstraints),
			PriorityClassName:             spec.PriorityClassName,
			SchedulerName:                 spec.SchedulerName,
			Subdomain:                     spec.Subdomain,
			DNSPolicy:                     spec.DNSPolicy,
			DNSConfig:                     spec.DNSConfig.DeepCopy(),
			ImagePullSecrets:              imagePullSecrets(spec),
			SecurityContext: &corev1.PodSecurityContext{
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:            ComputeContainerName,
				Image:           cfg.launcherImage(),
				ImagePullPolicy: cfg.launcherPullPolicy(),
				Command: []string{LauncherBinary,
					"--namespace", vmi.Namespace,
					"--name", vmi.Name,
					"--uid", string(vmi.UID),
					"--grace-period-seconds", strconv.FormatInt(grace, 10),
				},
				Resources:      resources,
				Ports:          containerPorts(spec),
				LivenessProbe:  podProbe(spec.LivenessProbe),
				ReadinessProbe: podProbe(spec.ReadinessProbe),
				VolumeMounts: []corev1.VolumeMount{
					{Name: PrivateVolume, MountPath: PrivateDir},
					{Name: DisksVolume, MountPath: DisksDir},
				},
				SecurityContext: launcherSecurityContext(),
			}},
			Volumes: podVolumes(),
		},
	}
	addDiskCopies(&pod.Spec, diskCopies(spec))
	if err := addConfigVolumes(pod, spec); err != nil {
		return nil, err
	}
	pod.Spec.Hostname = hostname(vmi)
	// Multus attaches the instance's Multus networks to the pod (pkg/multus).
	networks, err := multus.PodAnnotations(vmi)
	if err != nil {
		return nil, err
	}
	for k, v := range networks {
		pod.Annotations[k] = v
	}
	if err := addClaims(pod, vmi, cfg.Claims); err != nil {
		return nil, err
	}
	return pod, nil
}

// OwnerReference makes the instance the controller of its launcher pod.
func OwnerReference(vmi *kubevirtv1.VirtualMachineInstance) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         kubevirtv1.SchemeGroupVersion.String(),
		Kind:               "VirtualMachineInstance",
		Name:               vmi.Name,
		UID:                vmi.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// PodSelectorLabels are the labels that identify the launcher pods of the instance with uid.
func PodSelectorLabels(uid string) map[string]string {
	return map[string]string{kubevirtv1.AppLabel: LauncherLabelValue, kubevirtv1.CreatedByLabel: uid}
}

// podLabels carries the instance's own labels (so that a Service selecting the instance selects
// its pod, as in KubeVirt) under the launcher labels, which always win. The labels the apiserver
// mirrors from the instance's status (its node, its migration target) describe the instance at one
// moment, not the pod, and stay off it.
func podLabels(vmi *kubevirtv1.VirtualMachineInstance) map[string]string {
	labels := make(map[string]string, len(vmi.Labels)+3)
	for k, v := range vmi.Labels {
		if k == kubevirtv1.NodeNameLabel || k == kubevirtv1.MigrationTargetNodeNameLabel {
			continue
		}
		labels[k] = v
	}
	for k, v := range PodSelectorLabels(string(vmi.UID)) {
		labels[k] = v
	}
	labels[VMINameLabel] = vmi.Name
	return labels
}

// nodeSelector is the instance's node selector with the schedulable label, so that pods land
// only where a node agent lives, and the label of a named CPU model, so that they land only where
// QEMU can give the guest that CPU.
func nodeSelector(spec *kubevirtv1.VirtualMachineInstanceSpec) map[string]string {
	out := make(map[string]string, len(spec.NodeSelector)+2)
	for k, v := range spec.NodeSelector {
		out[k] = v
	}
	out[SchedulableLabel] = "true"
	if l := CPUModelLabel(&spec.Domain); l != "" {
		out[l] = "true"
	}
	return out
}

// hostname is the instance's hostname, else its name when that is a valid pod hostname.
func hostname(vmi *kubevirtv1.VirtualMachineInstance) string {
	if vmi.Spec.Hostname != "" {
		return vmi.Spec.Hostname
	}
	if len(validation.IsDNS1123Label(vmi.Name)) == 0 {
		return vmi.Name
	}
	return ""
}

func podVolumes() []corev1.Volume {
	empty := func(name string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	}
	return []corev1.Volume{empty(PrivateVolume), empty(DisksVolume)}
}

// restrictedSecurityContext drops every capability and any way to gain more.
func restrictedSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		Privileged:               ptr.To(false),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func launcherSecurityContext() *corev1.SecurityContext {
	sc := restrictedSecurityContext()
	sc.Capabilities.Add = append([]corev1.Capability(nil), launcherCapabilities...)
	return sc
}

func copyTolerations(in []corev1.Toleration) []corev1.Toleration {
	if in == nil {
		return nil
	}
	out := make([]corev1.Toleration, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

func copySpread(in []corev1.TopologySpreadConstraint) []corev1.TopologySpreadConstraint {
	if in == nil {
		return nil
	}
	out := make([]corev1.TopologySpreadConstraint, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
