package v1

// Disk is a block device of the guest. Its content comes from the volume
// of the same name.
type Disk struct {
	// Name of the disk; it must match a volume's name.
	Name string `json:"name"`
	// DiskDevice says how the disk is presented: disk, lun or cdrom.
	// Defaults to a virtio disk.
	DiskDevice `json:",inline"`
	// BootOrder is the disk's position in the boot order; the lowest boots
	// first. Disks without one are not booted from when any device has one.
	// +optional
	BootOrder *int32 `json:"bootOrder,omitempty"`
	// Serial is the disk's serial number as the guest sees it.
	// +optional
	Serial string `json:"serial,omitempty"`
	// DedicatedIOThread gives the disk an I/O thread of its own.
	// +optional
	DedicatedIOThread *bool `json:"dedicatedIOThread,omitempty"`
	// Cache is the host cache mode: none, writethrough or writeback.
	// +optional
	Cache DriverCache `json:"cache,omitempty"`
	// IO is the I/O mode: native or threads.
	// +optional
	IO DriverIO `json:"io,omitempty"`
	// Tag is exposed to the guest through device metadata.
	// +optional
	Tag string `json:"tag,omitempty"`
	// BlockSize sets the logical and physical block sizes.
	// +optional
	BlockSize *BlockSize `json:"blockSize,omitempty"`
	// Shareable lets several guests use the disk at once.
	// +optional
	Shareable *bool `json:"shareable,omitempty"`
	// ErrorPolicy says what the guest sees on an I/O error: stop, ignore, report or enospace.
	// +optional
	ErrorPolicy *DiskErrorPolicy `json:"errorPolicy,omitempty"`
	// ChangedBlockTracking enables changed block tracking for incremental backups.
	// +optional
	ChangedBlockTracking *bool `json:"changedBlockTracking,omitempty"`
}

// DiskDevice says how a disk is presented to the guest; at most one member is set.
type DiskDevice struct {
	// Disk presents the volume as a disk.
	// +optional
	Disk *DiskTarget `json:"disk,omitempty"`
	// LUN presents the volume as a SCSI LUN.
	// +optional
	LUN *LunTarget `json:"lun,omitempty"`
	// CDRom presents the volume as a CD-ROM.
	// +optional
	CDRom *CDRomTarget `json:"cdrom,omitempty"`
}

// DiskBus is the bus a disk is attached to.
type DiskBus string

// Disk buses.
const (
	// DiskBusVirtio is a paravirtual virtio-blk disk.
	DiskBusVirtio DiskBus = "virtio"
	// DiskBusSATA is a SATA disk.
	DiskBusSATA DiskBus = "sata"
	// DiskBusSCSI is a SCSI disk on a virtio-scsi controller.
	DiskBusSCSI DiskBus = "scsi"
	// DiskBusUSB is a USB disk.
	DiskBusUSB DiskBus = "usb"
)

// DiskTarget presents a volume as a disk.
type DiskTarget struct {
	// Bus is virtio, sata, scsi or usb. Defaults to virtio.
	// +optional
	Bus DiskBus `json:"bus,omitempty"`
	// ReadOnly presents the disk read-only.
	// +optional
	ReadOnly bool `json:"readonly,omitempty"`
	// PciAddress places a virtio disk at this PCI address, e.g. 0000:81:01.0.
	// +optional
	PciAddress string `json:"pciAddress,omitempty"`
}

// LunTarget presents a volume as a SCSI LUN.
type LunTarget struct {
	// Bus is the bus of the LUN. Defaults to scsi.
	// +optional
	Bus DiskBus `json:"bus,omitempty"`
	// ReadOnly presents the LUN read-only.
	// +optional
	ReadOnly bool `json:"readonly,omitempty"`
	// Reservation enables SCSI persistent reservations.
	// +optional
	Reservation bool `json:"reservation,omitempty"`
}

// TrayState is the state of a CD-ROM tray.
type TrayState string

// Tray states.
const (
	// TrayStateOpen: the tray is open (no medium).
	TrayStateOpen TrayState = "open"
	// TrayStateClosed: the tray is closed.
	TrayStateClosed TrayState = "closed"
)

// CDRomTarget presents a volume as a CD-ROM.
type CDRomTarget struct {
	// Bus is sata, scsi or usb. Defaults to sata.
	// +optional
	Bus DiskBus `json:"bus,omitempty"`
	// ReadOnly presents the CD-ROM read-only. Defaults to true.
	// +optional
	ReadOnly *bool `json:"readonly,omitempty"`
	// Tray is open or closed. Defaults to closed.
	// +optional
	Tray TrayState `json:"tray,omitempty"`
}

// DriverCache is a disk's host cache mode.
type DriverCache string

// DriverIO is a disk's I/O mode.
type DriverIO string

// Cache and I/O modes.
const (
	// CacheNone bypasses the host page cache.
	CacheNone DriverCache = "none"
	// CacheWriteThrough caches reads; writes reach storage before completing.
	CacheWriteThrough DriverCache = "writethrough"
	// CacheWriteBack caches reads and writes.
	CacheWriteBack DriverCache = "writeback"
	// IOThreads uses a pool of host threads for I/O.
	IOThreads DriverIO = "threads"
	// IONative uses Linux native asynchronous I/O.
	IONative DriverIO = "native"
)

// DiskErrorPolicy says what happens on a disk I/O error.
type DiskErrorPolicy string

// Disk error policies.
const (
	// DiskErrorPolicyStop pauses the guest.
	DiskErrorPolicyStop DiskErrorPolicy = "stop"
	// DiskErrorPolicyIgnore ignores the error.
	DiskErrorPolicyIgnore DiskErrorPolicy = "ignore"
	// DiskErrorPolicyReport reports the error to the guest.
	DiskErrorPolicyReport DiskErrorPolicy = "report"
	// DiskErrorPolicyEnospace reports only out-of-space errors and pauses on others.
	DiskErrorPolicyEnospace DiskErrorPolicy = "enospace"
)

// BlockSize sets a disk's block sizes: explicitly or from the volume.
type BlockSize struct {
	// Custom sets the sizes explicitly.
	// +optional
	Custom *CustomBlockSize `json:"custom,omitempty"`
	// MatchVolume takes the sizes from the volume.
	// +optional
	MatchVolume *FeatureState `json:"matchVolume,omitempty"`
}

// CustomBlockSize gives a disk's block sizes in bytes.
type CustomBlockSize struct {
	// Logical block size.
	// +optional
	Logical int32 `json:"logical,omitempty"`
	// Physical block size.
	// +optional
	Physical int32 `json:"physical,omitempty"`
	// DiscardGranularity is the granularity of discards.
	// +optional
	DiscardGranularity *int32 `json:"discardGranularity,omitempty"`
}
