package v1

// Features are hypervisor features exposed to a guest.
type Features struct {
	// ACPI enables ACPI; needed for graceful shutdown. Enabled unless turned off.
	// +optional
	ACPI FeatureState `json:"acpi,omitempty"`
	// APIC enables the local APIC.
	// +optional
	APIC *FeatureAPIC `json:"apic,omitempty"`
	// HypervPassthrough enables every Hyper-V enlightenment the host supports.
	// +optional
	HypervPassthrough *HyperVPassthrough `json:"hypervPassthrough,omitempty"`
	// Hyperv enables single Hyper-V enlightenments (for Windows guests).
	// +optional
	Hyperv *FeatureHyperv `json:"hyperv,omitempty"`
	// SMM enables System Management Mode (needed by EFI secure boot).
	// +optional
	SMM *FeatureState `json:"smm,omitempty"`
	// KVM configures the KVM paravirtual interface.
	// +optional
	KVM *FeatureKVM `json:"kvm,omitempty"`
	// Pvspinlock enables paravirtual spinlocks.
	// +optional
	Pvspinlock *FeatureState `json:"pvspinlock,omitempty"`
}

// FeatureState turns a feature on or off.
type FeatureState struct {
	// Enabled turns the feature on (true) or off (false). Unset means on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// HyperVPassthrough enables all Hyper-V enlightenments the host supports.
type HyperVPassthrough struct {
	// Enabled turns passthrough on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// FeatureAPIC configures the local APIC.
type FeatureAPIC struct {
	// Enabled turns the APIC on. Unset means on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// EndOfInterrupt enables paravirtual end-of-interrupt.
	// +optional
	EndOfInterrupt bool `json:"endOfInterrupt,omitempty"`
}

// FeatureSpinlocks configures Hyper-V spinlock retries.
type FeatureSpinlocks struct {
	// Enabled turns the feature on. Unset means on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// Retries before a spinlock is reported to the hypervisor; at least 4096.
	// +optional
	Retries *int32 `json:"spinlocks,omitempty"`
}

// FeatureVendorID sets the Hyper-V vendor ID.
type FeatureVendorID struct {
	// Enabled turns the feature on. Unset means on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// VendorID is the vendor ID string, at most 12 characters.
	// +optional
	VendorID string `json:"vendorid,omitempty"`
}

// SyNICTimer configures Hyper-V synthetic timers.
type SyNICTimer struct {
	// Enabled turns the timers on. Unset means on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// Direct enables direct-mode synthetic timers.
	// +optional
	Direct *FeatureState `json:"direct,omitempty"`
}

// FeatureHyperv selects Hyper-V enlightenments.
type FeatureHyperv struct {
	// Relaxed disables watchdog timeouts in the guest.
	// +optional
	Relaxed *FeatureState `json:"relaxed,omitempty"`
	// VAPIC enables the virtual APIC.
	// +optional
	VAPIC *FeatureState `json:"vapic,omitempty"`
	// Spinlocks configures spinlock retries.
	// +optional
	Spinlocks *FeatureSpinlocks `json:"spinlocks,omitempty"`
	// VPIndex enables the virtual processor index.
	// +optional
	VPIndex *FeatureState `json:"vpindex,omitempty"`
	// Runtime enables the processor run time counter.
	// +optional
	Runtime *FeatureState `json:"runtime,omitempty"`
	// SyNIC enables the synthetic interrupt controller.
	// +optional
	SyNIC *FeatureState `json:"synic,omitempty"`
	// SyNICTimer enables synthetic timers.
	// +optional
	SyNICTimer *SyNICTimer `json:"synictimer,omitempty"`
	// Reset enables the hypervisor reset.
	// +optional
	Reset *FeatureState `json:"reset,omitempty"`
	// VendorID sets the vendor ID.
	// +optional
	VendorID *FeatureVendorID `json:"vendorid,omitempty"`
	// Frequencies exposes the TSC and APIC frequencies.
	// +optional
	Frequencies *FeatureState `json:"frequencies,omitempty"`
	// Reenlightenment notifies the guest of TSC frequency changes after migration.
	// +optional
	Reenlightenment *FeatureState `json:"reenlightenment,omitempty"`
	// TLBFlush enables paravirtual TLB flushes.
	// +optional
	TLBFlush *FeatureState `json:"tlbflush,omitempty"`
	// IPI enables paravirtual inter-processor interrupts.
	// +optional
	IPI *FeatureState `json:"ipi,omitempty"`
	// EVMCS enables the enlightened VMCS (for nested guests).
	// +optional
	EVMCS *FeatureState `json:"evmcs,omitempty"`
}

// FeatureKVM configures the KVM paravirtual interface.
type FeatureKVM struct {
	// Hidden hides the KVM signature from the guest.
	// +optional
	Hidden bool `json:"hidden,omitempty"`
}
