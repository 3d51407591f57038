package launcherpod

import (
	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// The files a guest boots from that live in other images (containerDisk volumes, a kernel boot
// image) are copied into the `disks` emptyDir by containers that run beside the launcher, not
// before it: init containers run one after the other, and the kubelet notices each one's end
// only at its next relist, up to a second later (~0.8 s of a start each, measured here).
//
//   - The compute container's postStart hook copies the copy-disk binary into the `bin`
//     emptyDir and returns once the launcher holds its lock (LauncherLock). The kubelet starts
//     the next container only after that hook, so the copy containers find the binary.
//   - Each copy container runs that binary in the image holding the data: it copies the file to
//     its place (or leaves its error in <file>.failed) and then waits for the launcher's lock, so
//     that it ends when the launcher ends and the pod with them (and stays Ready meanwhile).
//   - The launcher starts libvirt while they copy and reports ready once every file is in place
//     (--await-file).

// diskCopy is one file copied out of an image into the disks volume.
type diskCopy struct {
	name       string
	image      string
	pullPolicy corev1.PullPolicy
	source     string
	dest       string
}

// diskCopies lists the copies the instance needs, in a stable order: its containerDisk volumes,
// then the kernel and the initrd of a kernel boot.
func diskCopies(spec *kubevirtv1.VirtualMachineInstanceSpec) []diskCopy {
	var copies []diskCopy
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if v.ContainerDisk == nil {
			continue
		}
		source := v.ContainerDisk.Path
		if source == "" {
			source = DefaultContainerDiskSource
		}
		copies = append(copies, diskCopy{ContainerDiskPrefix + v.Name, v.ContainerDisk.Image,
			v.ContainerDisk.ImagePullPolicy, source, ContainerDiskPath(v.Name)})
	}
	if kb := kernelBootContainer(spec); kb != nil {
		if kb.KernelPath != "" {
			copies = append(copies, diskCopy{KernelBootPrefix + "kernel", kb.Image, kb.ImagePullPolicy,
				kb.KernelPath, KernelPath()})
		}
		if kb.InitrdPath != "" {
			copies = append(copies, diskCopy{KernelBootPrefix + "initrd", kb.Image, kb.ImagePullPolicy,
				kb.InitrdPath, InitrdPath()})
		}
	}
	return copies
}

// addDiskCopies wires copies into the pod whose only container so far is the compute container:
// the `bin` volume, the compute container's postStart hook, lock and awaited files, and one copy
// container each after it. Nothing changes without copies.
func addDiskCopies(spec *corev1.PodSpec, copies []diskCopy) {
	if len(copies) == 0 {
		return
	}
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: BinVolume,
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	compute := &spec.Containers[0]
	compute.VolumeMounts = append(compute.VolumeMounts, corev1.VolumeMount{Name: BinVolume, MountPath: BinDir})
	compute.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
		Command: []string{CopyDiskBinary, "--install", CopiedBinary, "--await-lock", LauncherLock},
	}}}
	compute.Command = append(compute.Command, "--hold-lock", LauncherLock)
	containers := make([]corev1.Container, 0, len(copies))
	for _, c := range copies {
		compute.Command = append(compute.Command, "--await-file", c.dest)
		containers = append(containers, copyContainer(c))
	}
	spec.Containers = append(spec.Containers, containers...)
}

// copyContainer runs the copied copy-disk binary in c's image, copying c.source (a file, or the
// first regular file under a directory) to c.dest in the `disks` emptyDir, and then holding
// until the launcher ends.
func copyContainer(c diskCopy) corev1.Container {
	sc := restrictedSecurityContext()
	// Disk images in container images are often owned by another user (KubeVirt's by 107) and
	// not world-readable; DAC_OVERRIDE (allowed by Pod Security baseline) lets root read them.
	sc.Capabilities.Add = []corev1.Capability{"DAC_OVERRIDE"}
	return corev1.Container{
		Name:            c.name,
		Image:           c.image,
		ImagePullPolicy: c.pullPolicy,
		Command:         []string{CopiedBinary, "--source", c.source, "--dest", c.dest, "--hold", LauncherLock},
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
