// Package convert turns a VirtualMachineInstance into a libvirt domain.
//
// The conversion is pure: Convert reads the instance and a Context holding
// the node-side facts (emulation or KVM, the paths inside the launcher pod,
// how the pod network is wired, the formats of disk images) and returns a
// Domain, which Marshal renders as libvirt domain XML. Nothing here talks to
// libvirt, the file system or the Kubernetes API, so every converter is a
// plain function with its own table test, and the whole result is pinned by
// golden files under testdata.
//
// Each device family has its own file (cpu.go, memory.go, os.go, disks.go,
// volumes.go, interfaces.go, ...); devices.go assembles them. The XML
// structures (domain_xml.go, devices_xml.go) model only what NativeVirt
// emits, not libvirt's whole schema.
//
// Input that the converter cannot honour is refused with an error naming the
// field, never dropped: a guest without the device it asked for would be a
// different machine.
//
// What the caller (the node agent) prepares before defining the domain, all
// inside the launcher pod's volumes (paths in the XML are paths in the pod):
//   - container disks: the pod's copy containers copy them to
//     VolumeImagePath; the caller reads the first bytes and passes
//     DetectFormat's answer in Context.DiskFormats. A writable container
//     disk writes to a qcow2 overlay at ContainerDiskOverlayPath backed by
//     the copy (NeedsOverlay), which the caller creates: the copy is never
//     written, and the overlay can be block-migrated (libvirt refuses to
//     migrate a <transient/> disk).
//   - empty disks: a sparse raw file of the volume's capacity at VolumeImagePath.
//   - cloud-init: the ISO from package cloudinit at CloudInitISOPath.
//   - configMap, secret, serviceAccount, downwardAPI: the read-only ISO the launcher builds
//     at ConfigISOPath.
//   - kernel boot: kernel and initrd at KernelBootPaths (copied by the pod).
//   - claims: mounted at ClaimPath, or block devices at /dev/<volume>
//     (Context.BlockVolumes); the launcher pod mounts filesystem claims at
//     launcherpod.ClaimsDir/<volume> and attaches block claims at /dev/<volume>.
//   - networking: for each interface on the pod network (PodInterfaces) a
//     tap device TapName(i) that QEMU can open, on a bridge with the
//     gateway address, NAT between the pod's address and the guest's, and
//     DHCP for the guest (package network and the launcher do that).
package convert
