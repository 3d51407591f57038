package launcherpod

import "path"

// Names, labels and paths of the launcher pod contract.
const (
	// ComputeContainerName is the container running the launcher (and libvirt, and QEMU).
	ComputeContainerName = "compute"
	// ContainerDiskPrefix prefixes the container copying one containerDisk volume.
	ContainerDiskPrefix = "container-disk-"
	// KernelBootPrefix prefixes the containers copying the kernel and the initrd of a kernel
	// boot (kernel-boot-kernel, kernel-boot-initrd).
	KernelBootPrefix = "kernel-boot-"

	// LauncherLabelValue is the value of the kubevirt.io label on launcher pods.
	LauncherLabelValue = "virt-launcher"
	// defaultContainerAnnotation names the container kubectl logs and exec use without -c.
	defaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

	// VMINameLabel on a launcher pod names its instance.
	VMINameLabel = "vm.kubevirt.io/name"

	// PrivateVolume is the emptyDir shared between the launcher and the node agent.
	PrivateVolume = "private"
	// PrivateDir is where PrivateVolume is mounted in the compute container.
	PrivateDir = "/var/run/nativevirt"
	// LibvirtSocket is the launcher's libvirt socket.
	LibvirtSocket = PrivateDir + "/libvirt/libvirt-sock"
	// VNCSocket is the guest's VNC socket.
	VNCSocket = PrivateDir + "/vnc.sock"
	// SerialLog is the log of the guest's serial console.
	SerialLog = PrivateDir + "/serial.log"
	// ReadyMarker exists once the launcher's libvirt accepts connections.
	ReadyMarker = PrivateDir + "/ready"

	// DisksVolume is the emptyDir holding disk images, overlays, cloud-init ISOs and emptyDisks.
	DisksVolume = "disks"
	// DisksDir is where DisksVolume is mounted.
	DisksDir = "/var/run/nativevirt-disks"

	// BinVolume is the emptyDir carrying the copy-disk binary to the copy containers, and the
	// launcher's lock.
	BinVolume = "bin"
	// BinDir is where BinVolume is mounted.
	BinDir = "/var/run/nativevirt-bin"
	// CopyDiskBinary is the static binary in the launcher image that copies disks.
	CopyDiskBinary = "/usr/bin/nativevirt-copy-disk"
	// LauncherBinary is the launcher, PID 1 of the compute container.
	LauncherBinary = "/usr/bin/nativevirt-launcher"
	// DefaultContainerDiskSource is where a container disk image is looked for when the volume
	// names no path: the first regular file under it.
	DefaultContainerDiskSource = "/disk"

	// DefaultLauncherImage is the launcher image when the controller is given none.
	DefaultLauncherImage = "localhost/nativevirt-launcher:dev"
	// KVMResource is the device plugin resource that grants /dev/kvm.
	KVMResource = "devices.nativevirt.io/kvm"
	// TUNResource is the device plugin resource that grants /dev/net/tun, through which QEMU
	// opens the tap device the node agent prepares for the pod network.
	TUNResource = "devices.nativevirt.io/tun"
	// SchedulableLabel marks nodes whose node agent is alive ("true").
	SchedulableLabel = "kubevirt.io/schedulable"
	// PodGracePeriodSlack is added to the instance's grace period for the pod, so that the
	// launcher has the whole grace period for the guest and still time to exit by itself.
	PodGracePeriodSlack int64 = 15
)

// CopiedBinary is the copy-disk binary as the copy containers run it.
var CopiedBinary = path.Join(BinDir, path.Base(CopyDiskBinary))

// LauncherLock is the file the launcher keeps locked while it runs; the copy containers end
// when it is released.
var LauncherLock = path.Join(BinDir, "launcher.lock")

// ContainerDiskPath is where the disk image of containerDisk volume `volume` lands.
func ContainerDiskPath(volume string) string {
	return path.Join(DisksDir, volume, "disk.img")
}

// KernelPath is where the kernel of a kernel boot lands.
func KernelPath() string { return path.Join(DisksDir, "kernel-boot", "kernel") }

// InitrdPath is where the initrd of a kernel boot lands.
func InitrdPath() string { return path.Join(DisksDir, "kernel-boot", "initrd") }
