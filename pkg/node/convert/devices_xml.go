package convert

// Devices are the devices of a domain, in the order libvirt itself prints them.
type Devices struct {
	// Emulator is the QEMU binary inside the launcher pod.
	Emulator string `xml:"emulator,omitempty"`
	// Disks are block devices.
	Disks []Disk `xml:"disk,omitempty"`
	// Controllers are disk and USB controllers.
	Controllers []Controller `xml:"controller,omitempty"`
	// Interfaces are network interfaces.
	Interfaces []Interface `xml:"interface,omitempty"`
	// Serials are serial ports.
	Serials []Serial `xml:"serial,omitempty"`
	// Consoles are consoles (bound to serial ports).
	Consoles []Console `xml:"console,omitempty"`
	// Channels are host↔guest channels (the guest agent's).
	Channels []Channel `xml:"channel,omitempty"`
	// Inputs are input devices.
	Inputs []Input `xml:"input,omitempty"`
	// Graphics are remote displays.
	Graphics []Graphics `xml:"graphics,omitempty"`
	// Videos are video cards.
	Videos []Video `xml:"video,omitempty"`
	// Watchdog is a watchdog device.
	Watchdog *Watchdog `xml:"watchdog,omitempty"`
	// MemBalloon is the memory balloon (model "none" turns it off).
	MemBalloon *MemBalloon `xml:"memballoon,omitempty"`
	// RNGs are random number generators.
	RNGs []RNG `xml:"rng,omitempty"`
	// Panics are panic notifiers.
	Panics []Panic `xml:"panic,omitempty"`
	// TPM is an emulated TPM.
	TPM *TPM `xml:"tpm,omitempty"`
	// Sounds are sound cards; Audios their host backends.
	Sounds []Sound `xml:"sound,omitempty"`
	Audios []Audio `xml:"audio,omitempty"`
}

// Sound is an emulated sound card.
type Sound struct {
	// Model is "ich9" or "ac97".
	Model string      `xml:"model,attr"`
	Alias *Alias      `xml:"alias,omitempty"`
	Audio *SoundAudio `xml:"audio,omitempty"`
}

// SoundAudio ties a sound card to an audio backend.
type SoundAudio struct {
	ID int `xml:"id,attr"`
}

// Audio is a host audio backend.
type Audio struct {
	ID int `xml:"id,attr"`
	// Type is "none": the guest has a sound card, the host plays nothing (a pod has no sound
	// device); VNC carries no audio.
	Type string `xml:"type,attr"`
}

// TPM is an emulated TPM 2.0 (swtpm, started by libvirt).
type TPM struct {
	// Model is the TPM interface, "tpm-tis" as KubeVirt's.
	Model   string     `xml:"model,attr"`
	Backend TPMBackend `xml:"backend"`
}

// TPMBackend is the TPM's emulator.
type TPMBackend struct {
	// Type is "emulator"; Version "2.0".
	Type    string `xml:"type,attr"`
	Version string `xml:"version,attr"`
}

// Disk is a block device.
type Disk struct {
	// Type is "file" or "block".
	Type string `xml:"type,attr"`
	// Device is "disk" or "cdrom".
	Device string `xml:"device,attr"`
	// Model is "virtio-transitional" for old guests; empty otherwise.
	Model string `xml:"model,attr,omitempty"`
	// Driver configures the QEMU block driver.
	Driver *DiskDriver `xml:"driver,omitempty"`
	// Source is the image; nil for an empty CD-ROM.
	Source *DiskSource `xml:"source,omitempty"`
	// BackingStore is the backing image of an overlay Source.
	BackingStore *BackingStore `xml:"backingStore,omitempty"`
	// Target is the guest device name and bus.
	Target DiskTarget `xml:"target"`
	// BlockIO sets logical and physical block sizes.
	BlockIO *BlockIO `xml:"blockio,omitempty"`
	// Transient puts a throw-away copy-on-write overlay over the image.
	Transient *struct{} `xml:"transient,omitempty"`
	// ReadOnly presents the disk read-only.
	ReadOnly *struct{} `xml:"readonly,omitempty"`
	// Shareable lets several guests use the disk.
	Shareable *struct{} `xml:"shareable,omitempty"`
	// Serial is the disk serial number.
	Serial string `xml:"serial,omitempty"`
	// Boot is the disk's boot order.
	Boot *Boot `xml:"boot,omitempty"`
	// Alias names the device "ua-<disk name>".
	Alias *Alias `xml:"alias,omitempty"`
	// Address places the device.
	Address *Address `xml:"address,omitempty"`
}

// DiskDriver configures the QEMU block driver of a disk.
type DiskDriver struct {
	// Name is "qemu".
	Name string `xml:"name,attr"`
	// Type is the image format: raw or qcow2.
	Type string `xml:"type,attr"`
	// Cache is the host cache mode.
	Cache string `xml:"cache,attr,omitempty"`
	// ErrorPolicy is what happens on I/O errors.
	ErrorPolicy string `xml:"error_policy,attr,omitempty"`
	// IO is the I/O mode: native or threads.
	IO string `xml:"io,attr,omitempty"`
	// IOThread is the I/O thread serving the disk (virtio only).
	IOThread uint `xml:"iothread,attr,omitempty"`
	// Queues is the number of virtio queues.
	Queues uint32 `xml:"queues,attr,omitempty"`
}

// DiskSource is the image of a disk.
type DiskSource struct {
	// File is the image path (disk type file).
	File string `xml:"file,attr,omitempty"`
	// Dev is the block device path (disk type block).
	Dev string `xml:"dev,attr,omitempty"`
	// FDGroup names the file descriptors passed for the image (virDomainFDAssociate): the
	// file is opened by the node agent, never by path in the launcher.
	FDGroup string `xml:"fdgroup,attr,omitempty"`
}

// BackingStore is the read-only image below an overlay.
type BackingStore struct {
	// Type is "file".
	Type string `xml:"type,attr"`
	// Format is the backing image's format.
	Format BackingFormat `xml:"format"`
	// Source is the backing image.
	Source DiskSource `xml:"source"`
}

// BackingFormat is the format of a backing image.
type BackingFormat struct {
	// Type is raw or qcow2.
	Type string `xml:"type,attr"`
}

// DiskTarget is how the guest sees a disk.
type DiskTarget struct {
	// Dev is the device name, e.g. vda or sda.
	Dev string `xml:"dev,attr"`
	// Bus is virtio, sata, scsi or usb.
	Bus string `xml:"bus,attr"`
	// Tray is "open" for a CD-ROM without medium.
	Tray string `xml:"tray,attr,omitempty"`
}

// BlockIO sets the block sizes of a disk.
type BlockIO struct {
	// LogicalBlockSize in bytes.
	LogicalBlockSize uint32 `xml:"logical_block_size,attr,omitempty"`
	// PhysicalBlockSize in bytes.
	PhysicalBlockSize uint32 `xml:"physical_block_size,attr,omitempty"`
	// DiscardGranularity in bytes (libvirt 10.2+; 0 turns discard off for the guest).
	DiscardGranularity *uint32 `xml:"discard_granularity,attr,omitempty"`
}

// Boot is a device's place in the boot order.
type Boot struct {
	// Order is the position; 1 boots first.
	Order uint32 `xml:"order,attr"`
}

// Alias is a user-chosen device alias; libvirt needs the "ua-" prefix.
type Alias struct {
	// Name is the alias.
	Name string `xml:"name,attr"`
}

// Address is a PCI address.
type Address struct {
	// Type is "pci".
	Type string `xml:"type,attr"`
	// Domain is the PCI domain, e.g. 0x0000.
	Domain string `xml:"domain,attr"`
	// Bus is the PCI bus, e.g. 0x81.
	Bus string `xml:"bus,attr"`
	// Slot is the PCI slot, e.g. 0x01.
	Slot string `xml:"slot,attr"`
	// Function is the PCI function, e.g. 0x0.
	Function string `xml:"function,attr"`
}

// Controller is a disk or USB controller.
type Controller struct {
	// Type is scsi or usb.
	Type string `xml:"type,attr"`
	// Index is the controller's index.
	Index string `xml:"index,attr"`
	// Model is e.g. virtio-scsi, or none for no USB controller.
	Model string `xml:"model,attr,omitempty"`
}

// Interface is a network interface.
type Interface struct {
	// Type is "ethernet": a tap device prepared by the node agent.
	Type string `xml:"type,attr"`
	// MAC is the interface's MAC address.
	MAC *MAC `xml:"mac,omitempty"`
	// Target is the tap device in the pod.
	Target *InterfaceTarget `xml:"target,omitempty"`
	// Model is the emulated NIC.
	Model *InterfaceModel `xml:"model,omitempty"`
	// Driver sets the number of queues.
	Driver *InterfaceDriver `xml:"driver,omitempty"`
	// Link is the link state.
	Link *InterfaceLink `xml:"link,omitempty"`
	// Boot is the interface's boot order (PXE).
	Boot *Boot `xml:"boot,omitempty"`
	// ROM turns the option ROM off when PXE is not wanted.
	ROM *InterfaceROM `xml:"rom,omitempty"`
	// Alias names the device "ua-<interface name>".
	Alias *Alias `xml:"alias,omitempty"`
	// ACPI gives the interface a stable ACPI index.
	ACPI *InterfaceACPI `xml:"acpi,omitempty"`
	// Address places the device.
	Address *Address `xml:"address,omitempty"`
}

// MAC is a MAC address.
type MAC struct {
	// Address is the MAC, e.g. de:ad:00:00:be:af.
	Address string `xml:"address,attr"`
}

// InterfaceTarget is the host-side (pod-side) device of an interface.
type InterfaceTarget struct {
	// Dev is the tap device name.
	Dev string `xml:"dev,attr"`
	// Managed is "no": the tap exists already and libvirt must not touch it.
	Managed string `xml:"managed,attr,omitempty"`
}

// InterfaceModel is an emulated NIC model.
type InterfaceModel struct {
	// Type is e.g. virtio or e1000.
	Type string `xml:"type,attr"`
}

// InterfaceDriver configures a NIC's queues.
type InterfaceDriver struct {
	// Queues is the number of queue pairs.
	Queues uint32 `xml:"queues,attr,omitempty"`
}

// InterfaceLink is a NIC's link state.
type InterfaceLink struct {
	// State is up or down.
	State string `xml:"state,attr"`
}

// InterfaceROM configures a NIC's option ROM.
type InterfaceROM struct {
	// Enabled is "no" to leave the ROM out.
	Enabled string `xml:"enabled,attr"`
}

// InterfaceACPI is a NIC's ACPI index.
type InterfaceACPI struct {
	// Index is the ACPI index.
	Index uint32 `xml:"index,attr"`
}

// Serial is a serial port.
type Serial struct {
	// Type is "pty".
	Type string `xml:"type,attr"`
	// Target is the guest-side port.
	Target *SerialTarget `xml:"target,omitempty"`
	// Log copies the port's output into a file.
	Log *SerialLog `xml:"log,omitempty"`
}

// SerialTarget is the guest side of a serial port.
type SerialTarget struct {
	// Port is the port number.
	Port *uint32 `xml:"port,attr"`
}

// SerialLog copies a character device's output into a file.
type SerialLog struct {
	// File is the log file inside the pod.
	File string `xml:"file,attr"`
	// Append is "on" to keep earlier output.
	Append string `xml:"append,attr,omitempty"`
}

// Console is a console bound to a serial port.
type Console struct {
	// Type is "pty".
	Type string `xml:"type,attr"`
	// Target is the serial port behind the console.
	Target *ConsoleTarget `xml:"target,omitempty"`
}

// ConsoleTarget binds a console to a serial port.
type ConsoleTarget struct {
	// Type is "serial".
	Type string `xml:"type,attr"`
	// Port is the serial port number.
	Port *uint32 `xml:"port,attr"`
}

// Input is an input device.
type Input struct {
	// Type is tablet or keyboard.
	Type string `xml:"type,attr"`
	// Bus is usb or virtio.
	Bus string `xml:"bus,attr"`
	// Alias names the device "ua-<input name>".
	Alias *Alias `xml:"alias,omitempty"`
}

// Graphics is a remote display.
type Graphics struct {
	// Type is "vnc".
	Type string `xml:"type,attr"`
	// Listen is where the display listens.
	Listen *GraphicsListen `xml:"listen,omitempty"`
}

// GraphicsListen is a display's listener.
type GraphicsListen struct {
	// Type is "socket".
	Type string `xml:"type,attr"`
	// Socket is the unix socket path inside the pod.
	Socket string `xml:"socket,attr,omitempty"`
}

// Video is a video card.
type Video struct {
	// Model is the card model.
	Model VideoModel `xml:"model"`
}

// VideoModel is a video card model.
type VideoModel struct {
	// Type is vga, virtio, bochs, cirrus or none.
	Type string `xml:"type,attr"`
	// Heads is the number of screens.
	Heads uint32 `xml:"heads,attr,omitempty"`
}

// Watchdog is a watchdog device.
type Watchdog struct {
	// Model is i6300esb.
	Model string `xml:"model,attr"`
	// Action is what happens when it fires.
	Action string `xml:"action,attr"`
	// Alias names the device "ua-<watchdog name>".
	Alias *Alias `xml:"alias,omitempty"`
}

// MemBalloon is the memory balloon.
type MemBalloon struct {
	// Model is virtio, virtio-transitional or none.
	Model string `xml:"model,attr"`
	// Stats sets the statistics polling period.
	Stats *MemBalloonStats `xml:"stats,omitempty"`
}

// MemBalloonStats sets the balloon statistics period.
type MemBalloonStats struct {
	// Period in seconds.
	Period uint32 `xml:"period,attr"`
}

// RNG is a random number generator.
type RNG struct {
	// Model is virtio or virtio-transitional.
	Model string `xml:"model,attr"`
	// Backend is where randomness comes from.
	Backend RNGBackend `xml:"backend"`
}

// RNGBackend is the source of an RNG.
type RNGBackend struct {
	// Model is "random".
	Model string `xml:"model,attr"`
	// Source is the host device, /dev/urandom.
	Source string `xml:",chardata"`
}

// Panic is a panic notifier.
type Panic struct {
	// Model is hyperv, isa or pvpanic.
	Model string `xml:"model,attr"`
}
