package convert

import (
	"encoding/xml"
	"fmt"
)

// Domain is a libvirt domain definition, limited to what NativeVirt emits.
type Domain struct {
	XMLName xml.Name `xml:"domain"`
	// Type is the hypervisor: "kvm", or "qemu" for TCG emulation.
	Type string `xml:"type,attr"`
	// Name is the domain name, <namespace>_<name>.
	Name string `xml:"name"`
	// UUID is the domain UUID, taken from the firmware UUID.
	UUID string `xml:"uuid,omitempty"`
	// Metadata carries the instance identity (see InstanceMetadata).
	Metadata *Metadata `xml:"metadata,omitempty"`
	// Memory is the guest memory.
	Memory Memory `xml:"memory"`
	// VCPU is the number of virtual CPUs.
	VCPU *VCPU `xml:"vcpu,omitempty"`
	// IOThreads is the number of I/O threads; zero means none.
	IOThreads uint `xml:"iothreads,omitempty"`
	// SysInfo is the SMBIOS information shown to the guest.
	SysInfo *SysInfo `xml:"sysinfo,omitempty"`
	// OS is the boot configuration.
	OS OS `xml:"os"`
	// Features are hypervisor features.
	Features *Features `xml:"features,omitempty"`
	// CPU is the CPU model and topology.
	CPU *CPU `xml:"cpu,omitempty"`
	// Clock is the guest clock.
	Clock *Clock `xml:"clock,omitempty"`
	// OnPoweroff is what libvirt does when the guest powers off.
	OnPoweroff string `xml:"on_poweroff,omitempty"`
	// OnReboot is what libvirt does when the guest reboots.
	OnReboot string `xml:"on_reboot,omitempty"`
	// OnCrash is what libvirt does when the guest crashes.
	OnCrash string `xml:"on_crash,omitempty"`
	// Devices are the guest's devices.
	Devices Devices `xml:"devices"`
}

// Marshal renders the domain as indented libvirt domain XML.
func (d *Domain) Marshal() ([]byte, error) {
	if d == nil {
		return nil, fmt.Errorf("marshal domain: nil domain")
	}
	out, err := xml.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("marshal domain %q: %w", d.Name, err)
	}
	return append(out, '\n'), nil
}

// Metadata is the domain's <metadata> element.
type Metadata struct {
	// Instance identifies the VirtualMachineInstance the domain runs.
	Instance *InstanceMetadata `xml:"https://nativevirt.io/xmlns/domain/v1 instance"`
}

// Memory is an amount of memory with its unit.
type Memory struct {
	// Unit is the unit of Value, e.g. "MiB".
	Unit string `xml:"unit,attr"`
	// Value is the amount.
	Value uint64 `xml:",chardata"`
}

// VCPU is the vCPU count of a domain.
type VCPU struct {
	// Placement is "static".
	Placement string `xml:"placement,attr,omitempty"`
	// Count is the number of vCPUs.
	Count uint32 `xml:",chardata"`
}

// SysInfo is SMBIOS information.
type SysInfo struct {
	// Type is "smbios".
	Type string `xml:"type,attr"`
	// System is the SMBIOS type 1 (system) table.
	System *SysInfoTable `xml:"system,omitempty"`
	// Chassis is the SMBIOS type 3 (chassis) table.
	Chassis *SysInfoTable `xml:"chassis,omitempty"`
}

// SysInfoTable is one SMBIOS table.
type SysInfoTable struct {
	// Entries are the table's values.
	Entries []Entry `xml:"entry"`
}

// Entry is a named SMBIOS value.
type Entry struct {
	// Name is the SMBIOS field, e.g. "serial".
	Name string `xml:"name,attr"`
	// Value is the field's value.
	Value string `xml:",chardata"`
}

// OS is the domain's boot configuration.
type OS struct {
	// Firmware is "efi" to let libvirt pick an EFI firmware; empty means BIOS.
	Firmware string `xml:"firmware,attr,omitempty"`
	// Type is the guest type with architecture and machine type.
	Type OSType `xml:"type"`
	// FirmwareInfo narrows the firmware libvirt picks (e.g. no secure boot).
	FirmwareInfo *FirmwareInfo `xml:"firmware,omitempty"`
	// Kernel is the path of a kernel booted directly.
	Kernel string `xml:"kernel,omitempty"`
	// Initrd is the path of the initrd of a directly booted kernel.
	Initrd string `xml:"initrd,omitempty"`
	// Cmdline is the command line of a directly booted kernel.
	Cmdline string `xml:"cmdline,omitempty"`
	// BIOS configures SeaBIOS.
	BIOS *OSBIOS `xml:"bios,omitempty"`
	// ACPI adds ACPI tables from files.
	ACPI *OSACPI `xml:"acpi,omitempty"`
	// SMBIOS selects where SMBIOS data comes from.
	SMBIOS *OSSMBIOS `xml:"smbios,omitempty"`
}

// OSACPI lists extra ACPI tables.
type OSACPI struct {
	Tables []ACPITable `xml:"table"`
}

// ACPITable is a whole ACPI table (header and body) in a file.
type ACPITable struct {
	// Type is the table's kind ("slic", "msdm").
	Type string `xml:"type,attr"`
	// Path is the file.
	Path string `xml:",chardata"`
}

// OSType is the <type> of <os>.
type OSType struct {
	// Arch is the guest architecture, e.g. "x86_64".
	Arch string `xml:"arch,attr"`
	// Machine is the QEMU machine type, e.g. "q35".
	Machine string `xml:"machine,attr"`
	// Value is "hvm".
	Value string `xml:",chardata"`
}

// FirmwareInfo lists firmware features libvirt must (not) select.
type FirmwareInfo struct {
	// Features are the required or refused firmware features.
	Features []FirmwareFeature `xml:"feature"`
}

// FirmwareFeature requires or refuses one firmware feature.
type FirmwareFeature struct {
	// Enabled is "yes" or "no".
	Enabled string `xml:"enabled,attr"`
	// Name is the feature, e.g. "secure-boot".
	Name string `xml:"name,attr"`
}

// OSBIOS configures SeaBIOS.
type OSBIOS struct {
	// UseSerial is "yes" to send BIOS output to the serial port.
	UseSerial string `xml:"useserial,attr,omitempty"`
}

// OSSMBIOS selects the SMBIOS source.
type OSSMBIOS struct {
	// Mode is "sysinfo": the domain's <sysinfo>.
	Mode string `xml:"mode,attr"`
}

// Features are hypervisor features of a domain.
type Features struct {
	// ACPI is present when ACPI is on.
	ACPI *struct{} `xml:"acpi,omitempty"`
	// APIC is present when the APIC is on.
	APIC *FeatureAPIC `xml:"apic,omitempty"`
	// HyperV holds Hyper-V enlightenments.
	HyperV *FeatureHyperV `xml:"hyperv,omitempty"`
	// KVM holds KVM paravirtual settings.
	KVM *FeatureKVM `xml:"kvm,omitempty"`
	// PVSpinlock turns paravirtual spinlocks on or off.
	PVSpinlock *FeatureState `xml:"pvspinlock,omitempty"`
	// SMM turns System Management Mode on or off.
	SMM *FeatureState `xml:"smm,omitempty"`
	// TCG holds the settings of QEMU's emulator (domain type "qemu").
	TCG *FeatureTCG `xml:"tcg,omitempty"`
}

// FeatureTCG holds the settings of QEMU's emulator.
type FeatureTCG struct {
	// TBCache is the size of the translation cache (QEMU's -accel tcg,tb-size).
	TBCache *Size `xml:"tb-cache,omitempty"`
}

// Size is an amount with its unit.
type Size struct {
	Unit  string `xml:"unit,attr"`
	Value uint64 `xml:",chardata"`
}

// FeatureState is an on/off feature.
type FeatureState struct {
	// State is "on" or "off".
	State string `xml:"state,attr"`
}

// FeatureAPIC configures the APIC.
type FeatureAPIC struct {
	// EOI is "on" for paravirtual end-of-interrupt.
	EOI string `xml:"eoi,attr,omitempty"`
}

// FeatureHyperV holds Hyper-V enlightenments.
type FeatureHyperV struct {
	// Mode is "custom" (the listed features) or "passthrough" (all the host has).
	Mode string `xml:"mode,attr,omitempty"`
	// Relaxed disables watchdog timeouts in the guest.
	Relaxed *FeatureState `xml:"relaxed,omitempty"`
	// VAPIC is the virtual APIC.
	VAPIC *FeatureState `xml:"vapic,omitempty"`
	// Spinlocks configures spinlock retries.
	Spinlocks *FeatureSpinlocks `xml:"spinlocks,omitempty"`
	// VPIndex is the virtual processor index.
	VPIndex *FeatureState `xml:"vpindex,omitempty"`
	// Runtime is the processor run time counter.
	Runtime *FeatureState `xml:"runtime,omitempty"`
	// SyNIC is the synthetic interrupt controller.
	SyNIC *FeatureState `xml:"synic,omitempty"`
	// STimer are synthetic timers.
	STimer *FeatureSTimer `xml:"stimer,omitempty"`
	// Reset is the hypervisor reset.
	Reset *FeatureState `xml:"reset,omitempty"`
	// VendorID sets the vendor ID.
	VendorID *FeatureVendorID `xml:"vendor_id,omitempty"`
	// Frequencies exposes TSC and APIC frequencies.
	Frequencies *FeatureState `xml:"frequencies,omitempty"`
	// Reenlightenment notifies TSC frequency changes.
	Reenlightenment *FeatureState `xml:"reenlightenment,omitempty"`
	// TLBFlush is the paravirtual TLB flush.
	TLBFlush *FeatureState `xml:"tlbflush,omitempty"`
	// IPI is the paravirtual inter-processor interrupt.
	IPI *FeatureState `xml:"ipi,omitempty"`
	// EVMCS is the enlightened VMCS.
	EVMCS *FeatureState `xml:"evmcs,omitempty"`
}

// FeatureSpinlocks configures Hyper-V spinlock retries.
type FeatureSpinlocks struct {
	// State is "on" or "off".
	State string `xml:"state,attr"`
	// Retries is the retry count.
	Retries uint32 `xml:"retries,attr,omitempty"`
}

// FeatureSTimer configures Hyper-V synthetic timers.
type FeatureSTimer struct {
	// State is "on" or "off".
	State string `xml:"state,attr"`
	// Direct turns direct-mode timers on or off.
	Direct *FeatureState `xml:"direct,omitempty"`
}

// FeatureVendorID sets the Hyper-V vendor ID.
type FeatureVendorID struct {
	// State is "on" or "off".
	State string `xml:"state,attr"`
	// Value is the vendor ID string.
	Value string `xml:"value,attr,omitempty"`
}

// FeatureKVM holds KVM paravirtual settings.
type FeatureKVM struct {
	// Hidden hides the KVM signature.
	Hidden *FeatureState `xml:"hidden,omitempty"`
}

// CPU is a domain's CPU model and topology.
type CPU struct {
	// Mode is "custom", "host-model" or "host-passthrough"; empty leaves the
	// hypervisor's default model.
	Mode string `xml:"mode,attr,omitempty"`
	// Match is "exact" for custom models.
	Match string `xml:"match,attr,omitempty"`
	// Model is the CPU model of mode custom.
	Model *CPUModel `xml:"model,omitempty"`
	// Topology is the sockets/cores/threads layout.
	Topology *CPUTopology `xml:"topology,omitempty"`
	// Features add or remove single CPU features.
	Features []CPUFeature `xml:"feature,omitempty"`
}

// CPUModel names a CPU model.
type CPUModel struct {
	// Fallback is "allow" or "forbid".
	Fallback string `xml:"fallback,attr,omitempty"`
	// Value is the model name.
	Value string `xml:",chardata"`
}

// CPUTopology is the layout of the vCPUs.
type CPUTopology struct {
	// Sockets is the number of sockets.
	Sockets uint32 `xml:"sockets,attr"`
	// Dies is the number of dies per socket (always 1).
	Dies uint32 `xml:"dies,attr"`
	// Cores is the number of cores per die.
	Cores uint32 `xml:"cores,attr"`
	// Threads is the number of threads per core.
	Threads uint32 `xml:"threads,attr"`
}

// CPUFeature adds or removes one CPU feature.
type CPUFeature struct {
	// Policy is force, require, optional, disable or forbid.
	Policy string `xml:"policy,attr"`
	// Name is the feature name.
	Name string `xml:"name,attr"`
}

// Clock is a domain's clock.
type Clock struct {
	// Offset is "utc", "variable" or "timezone".
	Offset string `xml:"offset,attr"`
	// Adjustment is the offset in seconds of a variable clock.
	Adjustment string `xml:"adjustment,attr,omitempty"`
	// Basis is "utc" for a variable clock.
	Basis string `xml:"basis,attr,omitempty"`
	// Timezone is the timezone of a timezone clock.
	Timezone string `xml:"timezone,attr,omitempty"`
	// Timers configure single timers.
	Timers []Timer `xml:"timer,omitempty"`
}

// Timer configures one timer of a clock.
type Timer struct {
	// Name is rtc, pit, hpet, kvmclock or hypervclock.
	Name string `xml:"name,attr"`
	// TickPolicy is what happens to missed ticks.
	TickPolicy string `xml:"tickpolicy,attr,omitempty"`
	// Track is what the RTC follows: guest or wall.
	Track string `xml:"track,attr,omitempty"`
	// Present is "yes" or "no".
	Present string `xml:"present,attr,omitempty"`
}
