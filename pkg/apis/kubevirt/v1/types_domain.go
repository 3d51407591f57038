package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// DomainSpec is the virtual hardware of a guest.
type DomainSpec struct {
	// Resources are the compute resources requested for the guest; they size
	// the launcher pod and, unless memory.guest is set, the guest's memory.
	// +optional
	Resources ResourceRequirements `json:"resources,omitempty"`
	// CPU is the guest's CPU topology and model.
	// +optional
	CPU *CPU `json:"cpu,omitempty"`
	// Memory is the guest's memory layout.
	// +optional
	Memory *Memory `json:"memory,omitempty"`
	// Machine is the emulated machine type.
	// +optional
	Machine *Machine `json:"machine,omitempty"`
	// Firmware is the guest's firmware: UUID, bootloader, serial number, direct kernel boot.
	// +optional
	Firmware *Firmware `json:"firmware,omitempty"`
	// Clock is the guest's clock and timers.
	// +optional
	Clock *Clock `json:"clock,omitempty"`
	// Features are hypervisor features exposed to the guest (ACPI, APIC, Hyper-V enlightenments, ...).
	// +optional
	Features *Features `json:"features,omitempty"`
	// Devices are the guest's devices.
	Devices Devices `json:"devices"`
	// IOThreadsPolicy says how I/O threads are allocated to disks: shared, auto or supplementalPool.
	// +optional
	IOThreadsPolicy *IOThreadsPolicy `json:"ioThreadsPolicy,omitempty"`
	// IOThreads configures the supplemental pool of I/O threads.
	// +optional
	IOThreads *DiskIOThreads `json:"ioThreads,omitempty"`
	// Chassis is the SMBIOS chassis information shown to the guest.
	// +optional
	Chassis *Chassis `json:"chassis,omitempty"`
	// LaunchSecurity enables confidential computing (AMD SEV, Intel TDX).
	// +optional
	LaunchSecurity *LaunchSecurity `json:"launchSecurity,omitempty"`
}

// IOThreadsPolicy says how I/O threads are allocated.
type IOThreadsPolicy string

// I/O thread policies.
const (
	// IOThreadsPolicyShared: all disks share one I/O thread.
	IOThreadsPolicyShared IOThreadsPolicy = "shared"
	// IOThreadsPolicyAuto: a pool of threads sized from the vCPU count.
	IOThreadsPolicyAuto IOThreadsPolicy = "auto"
	// IOThreadsPolicySupplementalPool: a fixed pool of threads for all disks.
	IOThreadsPolicySupplementalPool IOThreadsPolicy = "supplementalPool"
)

// Well-known CPU models.
const (
	// CPUModeHostPassthrough passes the host CPU through unchanged.
	CPUModeHostPassthrough = "host-passthrough"
	// CPUModeHostModel is a CPU model close to the host's that can still migrate.
	CPUModeHostModel = "host-model"
	// DefaultCPUModel is the model used when none is set.
	DefaultCPUModel = CPUModeHostModel
)

// DiskIOThreads configures the supplemental I/O thread pool.
type DiskIOThreads struct {
	// SupplementalPoolThreadCount is the number of threads of the pool.
	// +optional
	SupplementalPoolThreadCount *int32 `json:"supplementalPoolThreadCount,omitempty"`
}

// Chassis is SMBIOS chassis information.
type Chassis struct {
	// Manufacturer of the chassis.
	// +optional
	Manufacturer string `json:"manufacturer,omitempty"`
	// Version of the chassis.
	// +optional
	Version string `json:"version,omitempty"`
	// Serial number of the chassis.
	// +optional
	Serial string `json:"serial,omitempty"`
	// Asset tag of the chassis.
	// +optional
	Asset string `json:"asset,omitempty"`
	// Sku of the chassis.
	// +optional
	Sku string `json:"sku,omitempty"`
}

// ResourceRequirements are the compute resources of a guest.
type ResourceRequirements struct {
	// Requests are the minimum resources (cpu, memory) reserved for the guest.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
	// Limits are the maximum resources the guest may use.
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty"`
	// OvercommitGuestOverhead leaves the virtualization overhead out of the
	// launcher pod's memory request (the limit still includes it).
	// +optional
	OvercommitGuestOverhead bool `json:"overcommitGuestOverhead,omitempty"`
}

// CPU is the guest's CPU topology and model.
type CPU struct {
	// Cores per socket. Unset means the node side computes it.
	// +optional
	Cores int32 `json:"cores,omitempty"`
	// Sockets of the guest. Unset means the node side computes it.
	// +optional
	Sockets int32 `json:"sockets,omitempty"`
	// MaxSockets is the highest socket count CPU hotplug may reach.
	// +optional
	MaxSockets int32 `json:"maxSockets,omitempty"`
	// Threads per core. Unset means the node side computes it.
	// +optional
	Threads int32 `json:"threads,omitempty"`
	// Model is the CPU model (a libvirt model name, host-model or host-passthrough).
	// +optional
	Model string `json:"model,omitempty"`
	// Features adds or removes single CPU features.
	// +optional
	// +listType=atomic
	Features []CPUFeature `json:"features,omitempty"`
	// DedicatedCPUPlacement pins each vCPU to its own host CPU.
	// +optional
	DedicatedCPUPlacement bool `json:"dedicatedCpuPlacement,omitempty"`
	// NUMA configures the guest's NUMA topology.
	// +optional
	NUMA *NUMA `json:"numa,omitempty"`
	// IsolateEmulatorThread gives the emulator thread a host CPU of its own
	// (with dedicatedCpuPlacement).
	// +optional
	IsolateEmulatorThread bool `json:"isolateEmulatorThread,omitempty"`
	// Realtime tunes the guest for realtime workloads.
	// +optional
	Realtime *Realtime `json:"realtime,omitempty"`
}

// Realtime tunes a guest for realtime workloads.
type Realtime struct {
	// Mask selects the vCPUs that run with realtime scheduling, e.g. "0-3,^1".
	// +optional
	Mask string `json:"mask,omitempty"`
}

// NUMAGuestMappingPassthrough mirrors the host NUMA cells the vCPUs run on into the guest.
type NUMAGuestMappingPassthrough struct{}

// NUMA configures a guest's NUMA topology.
type NUMA struct {
	// GuestMappingPassthrough mirrors the host NUMA topology of the pinned vCPUs.
	// +optional
	GuestMappingPassthrough *NUMAGuestMappingPassthrough `json:"guestMappingPassthrough,omitempty"`
}

// CPUFeature adds or removes one CPU feature.
type CPUFeature struct {
	// Name of the feature (a libvirt feature name).
	Name string `json:"name"`
	// Policy is force, require, optional, disable or forbid; empty means require.
	// +optional
	Policy string `json:"policy,omitempty"`
}

// Memory is a guest's memory layout.
type Memory struct {
	// Hugepages backs guest memory with huge pages.
	// +optional
	Hugepages *Hugepages `json:"hugepages,omitempty"`
	// Guest is the memory the guest sees; defaults to the memory request.
	// +optional
	Guest *resource.Quantity `json:"guest,omitempty"`
	// MaxGuest is the most memory hotplug may give the guest.
	// +optional
	MaxGuest *resource.Quantity `json:"maxGuest,omitempty"`
}

// Hugepages backs guest memory with huge pages.
type Hugepages struct {
	// PageSize is the huge page size, e.g. 2Mi or 1Gi.
	// +optional
	PageSize string `json:"pageSize,omitempty"`
}

// Machine is an emulated machine type.
type Machine struct {
	// Type is the QEMU machine type, e.g. q35.
	Type string `json:"type"`
}

// Firmware is a guest's firmware.
type Firmware struct {
	// UUID is the guest's SMBIOS system UUID. When empty, NativeVirt derives
	// a stable one from the namespace and name.
	// +optional
	UUID types.UID `json:"uuid,omitempty"`
	// Bootloader chooses BIOS or EFI.
	// +optional
	Bootloader *Bootloader `json:"bootloader,omitempty"`
	// Serial is the guest's SMBIOS system serial number.
	// +optional
	Serial string `json:"serial,omitempty"`
	// KernelBoot boots a kernel (and initrd) taken from a container image directly.
	// +optional
	KernelBoot *KernelBoot `json:"kernelBoot,omitempty"`
	// ACPI adds ACPI tables taken from secrets.
	// +optional
	ACPI *ACPI `json:"acpi,omitempty"`
}

// ACPI names volumes holding ACPI tables for the guest.
type ACPI struct {
	// SlicNameRef names a secret volume holding a SLIC table.
	// +optional
	SlicNameRef string `json:"slicNameRef,omitempty"`
	// MsdmNameRef names a secret volume holding an MSDM table.
	// +optional
	MsdmNameRef string `json:"msdmNameRef,omitempty"`
}

// Bootloader chooses the guest's firmware type; at most one member is set.
type Bootloader struct {
	// BIOS boots through SeaBIOS.
	// +optional
	BIOS *BIOS `json:"bios,omitempty"`
	// EFI boots through OVMF.
	// +optional
	EFI *EFI `json:"efi,omitempty"`
}

// BIOS configures a BIOS bootloader.
type BIOS struct {
	// UseSerial sends BIOS output to the serial console.
	// +optional
	UseSerial *bool `json:"useSerial,omitempty"`
}

// EFI configures an EFI bootloader.
type EFI struct {
	// SecureBoot enables UEFI secure boot (needs SMM). Defaults to true.
	// +optional
	SecureBoot *bool `json:"secureBoot,omitempty"`
	// Persistent keeps the EFI variables across restarts.
	// +optional
	Persistent *bool `json:"persistent,omitempty"`
}

// KernelBoot boots a kernel directly instead of through a bootloader.
type KernelBoot struct {
	// KernelArgs is the kernel command line.
	// +optional
	KernelArgs string `json:"kernelArgs,omitempty"`
	// Container is the image holding the kernel and initrd.
	// +optional
	Container *KernelBootContainer `json:"container,omitempty"`
}

// KernelBootContainer is a container image holding a kernel and an initrd.
type KernelBootContainer struct {
	// Image is the container image.
	Image string `json:"image"`
	// ImagePullSecret names the secret used to pull the image.
	// +optional
	ImagePullSecret string `json:"imagePullSecret,omitempty"`
	// ImagePullPolicy is Always, Never or IfNotPresent.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// KernelPath is the kernel's path inside the image.
	// +optional
	KernelPath string `json:"kernelPath,omitempty"`
	// InitrdPath is the initrd's path inside the image.
	// +optional
	InitrdPath string `json:"initrdPath,omitempty"`
}

// LaunchSecurity enables confidential computing; at most one member is set.
type LaunchSecurity struct {
	// SEV enables AMD Secure Encrypted Virtualization.
	// +optional
	SEV *SEV `json:"sev,omitempty"`
	// SNP enables AMD SEV with Secure Nested Paging.
	// +optional
	SNP *SEVSNP `json:"snp,omitempty"`
	// TDX enables Intel Trust Domain Extensions.
	// +optional
	TDX *TDX `json:"tdx,omitempty"`
}

// SEV configures AMD SEV.
type SEV struct {
	// Policy of the guest.
	// +optional
	Policy *SEVPolicy `json:"policy,omitempty"`
	// Attestation requests an attestation flow.
	// +optional
	Attestation *SEVAttestation `json:"attestation,omitempty"`
	// Session is the base64 session blob.
	// +optional
	Session string `json:"session,omitempty"`
	// DHCert is the base64 Diffie-Hellman certificate of the guest owner.
	// +optional
	DHCert string `json:"dhCert,omitempty"`
}

// SEVPolicy is the policy of an SEV guest.
type SEVPolicy struct {
	// EncryptedState enables SEV-ES (encrypted CPU registers).
	// +optional
	EncryptedState *bool `json:"encryptedState,omitempty"`
}

// SEVSNP enables AMD SEV-SNP.
type SEVSNP struct{}

// SEVAttestation requests SEV attestation.
type SEVAttestation struct{}

// TDX enables Intel TDX.
type TDX struct{}
