package v1

// Devices are the devices of a guest.
type Devices struct {
	// UseVirtioTransitional uses virtio transitional devices, for guests with
	// old virtio drivers (e.g. CentOS 6).
	// +optional
	UseVirtioTransitional *bool `json:"useVirtioTransitional,omitempty"`
	// DisableHotplug leaves out the spare PCI ports that hotplug needs.
	// +optional
	DisableHotplug bool `json:"disableHotplug,omitempty"`
	// Disks are the guest's disks; each takes its content from the volume of the same name.
	// +optional
	// +patchMergeKey=name
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=name
	Disks []Disk `json:"disks,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	// Watchdog is a watchdog device.
	// +optional
	Watchdog *Watchdog `json:"watchdog,omitempty"`
	// Interfaces are the guest's network interfaces; each attaches to the network of the same name.
	// +optional
	// +patchMergeKey=name
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=name
	Interfaces []Interface `json:"interfaces,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	// Inputs are input devices (tablets, keyboards).
	// +optional
	// +listType=atomic
	Inputs []Input `json:"inputs,omitempty"`
	// AutoattachPodInterface adds a pod network interface when no interface is
	// listed. Defaults to true.
	// +optional
	AutoattachPodInterface *bool `json:"autoattachPodInterface,omitempty"`
	// AutoattachGraphicsDevice adds a graphics device and VNC. Defaults to true.
	// +optional
	AutoattachGraphicsDevice *bool `json:"autoattachGraphicsDevice,omitempty"`
	// AutoattachSerialConsole adds a serial console. Defaults to true.
	// +optional
	AutoattachSerialConsole *bool `json:"autoattachSerialConsole,omitempty"`
	// LogSerialConsole streams the serial console into the launcher pod's log.
	// +optional
	LogSerialConsole *bool `json:"logSerialConsole,omitempty"`
	// AutoattachMemBalloon adds a memory balloon device. Defaults to true.
	// +optional
	AutoattachMemBalloon *bool `json:"autoattachMemBalloon,omitempty"`
	// AutoattachInputDevice adds a tablet input device.
	// +optional
	AutoattachInputDevice *bool `json:"autoattachInputDevice,omitempty"`
	// AutoattachVSOCK adds a virtio-vsock device.
	// +optional
	AutoattachVSOCK *bool `json:"autoattachVSOCK,omitempty"`
	// Rng adds a virtio random number generator fed from the host.
	// +optional
	Rng *Rng `json:"rng,omitempty"`
	// BlockMultiQueue gives each virtio disk one queue per vCPU.
	// +optional
	BlockMultiQueue *bool `json:"blockMultiQueue,omitempty"`
	// NetworkInterfaceMultiQueue gives each virtio network interface one queue per vCPU.
	// +optional
	NetworkInterfaceMultiQueue *bool `json:"networkInterfaceMultiqueue,omitempty"`
	// GPUs passes GPUs (or vGPUs) through to the guest.
	// +optional
	// +listType=atomic
	GPUs []GPU `json:"gpus,omitempty"`
	// DownwardMetrics adds a virtio-serial port that exposes host metrics to the guest.
	// +optional
	DownwardMetrics *DownwardMetrics `json:"downwardMetrics,omitempty"`
	// PanicDevices are panic notification devices.
	// +optional
	// +listType=atomic
	PanicDevices []PanicDevice `json:"panicDevices,omitempty"`
	// Filesystems share directories of volumes with the guest through virtiofs.
	// +optional
	// +listType=atomic
	Filesystems []Filesystem `json:"filesystems,omitempty"`
	// HostDevices passes host devices through to the guest.
	// +optional
	// +listType=atomic
	HostDevices []HostDevice `json:"hostDevices,omitempty"`
	// ClientPassthrough lets a client redirect its USB devices into the guest.
	// +optional
	ClientPassthrough *ClientPassthroughDevices `json:"clientPassthrough,omitempty"`
	// Sound adds a sound card.
	// +optional
	Sound *SoundDevice `json:"sound,omitempty"`
	// TPM adds an emulated TPM.
	// +optional
	TPM *TPMDevice `json:"tpm,omitempty"`
	// Video selects the video device model.
	// +optional
	Video *VideoDevice `json:"video,omitempty"`
}

// Rng is a virtio random number generator.
type Rng struct{}

// DownwardMetrics is a virtio-serial port exposing host metrics.
type DownwardMetrics struct{}

// ClientPassthroughDevices allows USB redirection from a client.
type ClientPassthroughDevices struct{}

// SoundDevice is a sound card.
type SoundDevice struct {
	// Name of the device.
	Name string `json:"name"`
	// Model is ich9 or ac97; defaults to ich9.
	// +optional
	Model string `json:"model,omitempty"`
}

// TPMDevice is an emulated TPM.
type TPMDevice struct {
	// Enabled turns the TPM off when false. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// Persistent keeps the TPM state across restarts.
	// +optional
	Persistent *bool `json:"persistent,omitempty"`
}

// VideoDevice selects a video device model.
type VideoDevice struct {
	// Type is the video model, e.g. vga, virtio or bochs.
	// +optional
	Type string `json:"type,omitempty"`
}

// InputBus is the bus of an input device.
type InputBus string

// Input buses.
const (
	// InputBusUSB attaches the device to USB.
	InputBusUSB InputBus = "usb"
	// InputBusVirtio attaches the device as virtio.
	InputBusVirtio InputBus = "virtio"
)

// InputType is the kind of an input device.
type InputType string

// Input types.
const (
	// InputTypeTablet is an absolute pointing device.
	InputTypeTablet InputType = "tablet"
	// InputTypeKeyboard is a keyboard.
	InputTypeKeyboard InputType = "keyboard"
)

// Input is an input device.
type Input struct {
	// Bus is usb or virtio. Defaults to usb.
	// +optional
	Bus InputBus `json:"bus,omitempty"`
	// Type is tablet or keyboard. Defaults to tablet.
	Type InputType `json:"type"`
	// Name of the device.
	Name string `json:"name"`
}

// Filesystem shares a volume's directory with the guest.
type Filesystem struct {
	// Name of the volume to share.
	Name string `json:"name"`
	// Virtiofs shares it through virtiofs.
	Virtiofs *FilesystemVirtiofs `json:"virtiofs"`
}

// FilesystemVirtiofs selects virtiofs.
type FilesystemVirtiofs struct{}

// ClaimRequest points at a dynamic resource allocation claim and request.
type ClaimRequest struct {
	// ClaimName names an entry of spec.resourceClaims.
	// +optional
	ClaimName *string `json:"claimName,omitempty"`
	// RequestName names a request of that claim.
	// +optional
	RequestName *string `json:"requestName,omitempty"`
}

// GPU is a GPU (or vGPU) passed through to the guest.
type GPU struct {
	// Name of the device in the guest.
	Name string `json:"name"`
	// DeviceName is the extended resource name of the GPU on the node.
	// +optional
	DeviceName string `json:"deviceName,omitempty"`
	// ClaimRequest selects the GPU through dynamic resource allocation instead.
	ClaimRequest `json:",inline"`
	// VirtualGPUOptions configures a vGPU's display.
	// +optional
	VirtualGPUOptions *VGPUOptions `json:"virtualGPUOptions,omitempty"`
	// Tag is exposed to the guest through device metadata.
	// +optional
	Tag string `json:"tag,omitempty"`
}

// VGPUOptions configures a vGPU.
type VGPUOptions struct {
	// Display configures the vGPU's display.
	// +optional
	Display *VGPUDisplayOptions `json:"display,omitempty"`
}

// VGPUDisplayOptions configures a vGPU's display.
type VGPUDisplayOptions struct {
	// Enabled uses the vGPU as the primary display. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// RamFB enables a ramfb boot display. Defaults to true.
	// +optional
	RamFB *FeatureState `json:"ramFB,omitempty"`
}

// PanicDeviceModel is the model of a panic device.
type PanicDeviceModel string

// Panic device models.
const (
	// Hyperv is the Hyper-V panic notifier.
	Hyperv PanicDeviceModel = "hyperv"
	// Isa is the ISA pvpanic device.
	Isa PanicDeviceModel = "isa"
	// Pvpanic is the PCI pvpanic device.
	Pvpanic PanicDeviceModel = "pvpanic"
)

// PanicDevice notifies the host of guest panics.
type PanicDevice struct {
	// Model is hyperv, isa or pvpanic.
	// +optional
	Model *PanicDeviceModel `json:"model,omitempty"`
}

// HostDevice is a host device passed through to the guest.
type HostDevice struct {
	// Name of the device in the guest.
	Name string `json:"name"`
	// DeviceName is the extended resource name of the device on the node.
	// +optional
	DeviceName string `json:"deviceName,omitempty"`
	// ClaimRequest selects the device through dynamic resource allocation instead.
	ClaimRequest `json:",inline"`
	// Tag is exposed to the guest through device metadata.
	// +optional
	Tag string `json:"tag,omitempty"`
}

// WatchdogAction is what a watchdog does when it fires.
type WatchdogAction string

// Watchdog actions.
const (
	// WatchdogActionPoweroff powers the guest off.
	WatchdogActionPoweroff WatchdogAction = "poweroff"
	// WatchdogActionReset resets the guest.
	WatchdogActionReset WatchdogAction = "reset"
	// WatchdogActionShutdown shuts the guest down gracefully.
	WatchdogActionShutdown WatchdogAction = "shutdown"
)

// Watchdog is a watchdog device.
type Watchdog struct {
	// Name of the device.
	Name string `json:"name"`
	// WatchdogDevice selects the model.
	WatchdogDevice `json:",inline"`
}

// WatchdogDevice selects a watchdog model; exactly one member is set.
type WatchdogDevice struct {
	// I6300ESB is the Intel 6300ESB watchdog (x86).
	// +optional
	I6300ESB *I6300ESBWatchdog `json:"i6300esb,omitempty"`
	// Diag288 is the s390x diag288 watchdog.
	// +optional
	Diag288 *Diag288Watchdog `json:"diag288,omitempty"`
}

// I6300ESBWatchdog is the Intel 6300ESB watchdog.
type I6300ESBWatchdog struct {
	// Action is poweroff, reset or shutdown. Defaults to reset.
	// +optional
	Action WatchdogAction `json:"action,omitempty"`
}

// Diag288Watchdog is the s390x diag288 watchdog.
type Diag288Watchdog struct {
	// Action is poweroff, reset or shutdown. Defaults to reset.
	// +optional
	Action WatchdogAction `json:"action,omitempty"`
}
