package launcherpod

import (
	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// initContainers copies what the guest boots from into the `disks` emptyDir before the launcher
// starts: first the copy-disk binary from the launcher image into `bin`, then one container per
// containerDisk volume (and two for a kernel boot image) running that binary inside the image
// that holds the data. Nothing is copied, and no init container exists, when no volume needs it.
func initContainers(vmi *kubevirtv1.VirtualMachineInstance, cfg *Config) []corev1.Container {
	var copies []corev1.Container
	for i := range vmi.Spec.Volumes {
		v := &vmi.Spec.Volumes[i]
		if v.ContainerDisk == nil {
			continue
		}
		source := v.ContainerDisk.Path
		if source == "" {
			source = DefaultContainerDiskSource
		}
		copies = append(copies, copyContainer(ContainerDiskInitPrefix+v.Name, v.ContainerDisk.Image,
			v.ContainerDisk.ImagePullPolicy, source, ContainerDiskPath(v.Name)))
	}
	if kb := kernelBootContainer(&vmi.Spec); kb != nil {
		if kb.KernelPath != "" {
			copies = append(copies, copyContainer(KernelBootInitPrefix+"kernel", kb.Image, kb.ImagePullPolicy,
				kb.KernelPath, KernelPath()))
		}
		if kb.InitrdPath != "" {
			copies = append(copies, copyContainer(KernelBootInitPrefix+"initrd", kb.Image, kb.ImagePullPolicy,
				kb.InitrdPath, InitrdPath()))
		}
	}
	if len(copies) == 0 {
		return nil
	}
	bin := corev1.Container{
		Name:            BinInitContainerName,
		Image:           cfg.launcherImage(),
		ImagePullPolicy: cfg.launcherPullPolicy(),
		Command:         []string{"/bin/cp", CopyDiskBinary, CopiedBinary},
		VolumeMounts:    []corev1.VolumeMount{{Name: BinVolume, MountPath: BinDir}},
		SecurityContext: restrictedSecurityContext(),
	}
	return append([]corev1.Container{bin}, copies...)
}

// copyContainer runs the copied copy-disk binary in image, copying source (a file, or the first
// regular file under a directory) to dest in the `disks` emptyDir.
func copyContainer(name, image string, pullPolicy corev1.PullPolicy, source, dest string) corev1.Container {
	sc := restrictedSecurityContext()
	// Disk images in container images are often owned by another user (KubeVirt's by 107) and
	// not world-readable; DAC_OVERRIDE (allowed by Pod Security baseline) lets root read them.
	sc.Capabilities.Add = []corev1.Capability{"DAC_OVERRIDE"}
	return corev1.Container{
		Name:            name,
		Image:           image,
		ImagePullPolicy: pullPolicy,
		Command:         []string{CopiedBinary, "--source", source, "--dest", dest},
		VolumeMounts: []corev1.VolumeMount{
			{Name: BinVolume, MountPath: BinDir, ReadOnly: true},
			{Name: DisksVolume, MountPath: DisksDir},
		},
		SecurityContext: sc,
	}
}

// kernelBootContainer returns the kernel boot image of spec, or nil.
func kernelBootContainer(spec *kubevirtv1.VirtualMachineInstanceSpec) *kubevirtv1.KernelBootContainer {
	fw := spec.Domain.Firmware
	if fw == nil || fw.KernelBoot == nil {
		return nil
	}
	return fw.KernelBoot.Container
}

// imagePullSecrets collects the pull secrets named by the images the pod pulls, once each.
func imagePullSecrets(spec *kubevirtv1.VirtualMachineInstanceSpec) []corev1.LocalObjectReference {
	var names []string
	for i := range spec.Volumes {
		if cd := spec.Volumes[i].ContainerDisk; cd != nil && cd.ImagePullSecret != "" {
			names = append(names, cd.ImagePullSecret)
		}
	}
	if kb := kernelBootContainer(spec); kb != nil && kb.ImagePullSecret != "" {
		names = append(names, kb.ImagePullSecret)
	}
	var out []corev1.LocalObjectReference
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, corev1.LocalObjectReference{Name: n})
		}
	}
	return out
}
