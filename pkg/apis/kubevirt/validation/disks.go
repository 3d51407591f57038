package validation

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// pciAddressPattern is a PCI address in domain:bus:slot.function form, e.g. 0000:81:01.0.
var pciAddressPattern = regexp.MustCompile(`^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$`)

var (
	diskBuses  = []kubevirtv1.DiskBus{kubevirtv1.DiskBusVirtio, kubevirtv1.DiskBusSATA, kubevirtv1.DiskBusSCSI, kubevirtv1.DiskBusUSB}
	cdromBuses = []kubevirtv1.DiskBus{kubevirtv1.DiskBusSATA, kubevirtv1.DiskBusSCSI}
	cacheModes = []kubevirtv1.DriverCache{kubevirtv1.CacheNone, kubevirtv1.CacheWriteThrough, kubevirtv1.CacheWriteBack}
	ioModes    = []kubevirtv1.DriverIO{kubevirtv1.IONative, kubevirtv1.IOThreads}
	errorModes = []kubevirtv1.DiskErrorPolicy{kubevirtv1.DiskErrorPolicyStop, kubevirtv1.DiskErrorPolicyIgnore,
		kubevirtv1.DiskErrorPolicyReport, kubevirtv1.DiskErrorPolicyEnospace}
)

// validateDisks checks every disk and its link to a volume: a disk takes its content from the
// volume of the same name, so names are unique DNS-1123 labels that must name a volume. As disk
// names are unique, no volume can back two disks.
func validateDisks(disks []kubevirtv1.Disk, volumes nameSet, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := nameSet{}
	for i := range disks {
		d := &disks[i]
		diskPath := fldPath.Index(i)
		namePath := diskPath.Child("name")
		nameErrs := validateDNSLabel(d.Name, namePath)
		errs = append(errs, nameErrs...)
		errs = appendErr(errs, seen.add(d.Name, namePath))
		if len(nameErrs) == 0 && !volumes.has(d.Name) {
			errs = append(errs, field.Invalid(namePath, d.Name, fmt.Sprintf("disk %s has no matching volume", d.Name)))
		}
		errs = append(errs, validateDiskDevice(&d.DiskDevice, diskPath)...)
		errs = append(errs, validateDiskDriver(d, diskPath)...)
		errs = append(errs, check(unsupportedDiskFields, d, diskPath)...)
	}
	return errs
}

// validateDiskDevice allows at most one of disk, lun and cdrom, each on a bus it supports. A
// disk with none is a virtio disk after defaulting. LUNs are refused by the unsupported table,
// so their bus is not checked here.
func validateDiskDevice(dev *kubevirtv1.DiskDevice, diskPath *field.Path) field.ErrorList {
	var set []string
	if dev.Disk != nil {
		set = append(set, "disk")
	}
	if dev.LUN != nil {
		set = append(set, "lun")
	}
	if dev.CDRom != nil {
		set = append(set, "cdrom")
	}
	if len(set) > 1 {
		return field.ErrorList{field.Invalid(diskPath, set, "at most one of disk, lun and cdrom may be set")}
	}
	var errs field.ErrorList
	if dev.Disk != nil {
		errs = append(errs, ValidateDiskBus(dev.Disk.Bus, diskPath.Child("disk", "bus"))...)
		if a := dev.Disk.PciAddress; a != "" {
			if !pciAddressPattern.MatchString(a) {
				errs = append(errs, field.Invalid(diskPath.Child("disk", "pciAddress"), a, "must be a PCI address such as 0000:81:01.0"))
			} else if dev.Disk.Bus != "" && dev.Disk.Bus != kubevirtv1.DiskBusVirtio {
				errs = append(errs, field.Invalid(diskPath.Child("disk", "pciAddress"), a, "only virtio disks can be placed at a PCI address"))
			}
		}
	}
	if dev.CDRom != nil {
		errs = append(errs, ValidateCdromBus(dev.CDRom.Bus, diskPath.Child("cdrom", "bus"))...)
		trays := []kubevirtv1.TrayState{kubevirtv1.TrayStateOpen, kubevirtv1.TrayStateClosed}
		if dev.CDRom.Tray != "" && !contains(trays, dev.CDRom.Tray) {
			errs = append(errs, field.NotSupported(diskPath.Child("cdrom", "tray"), string(dev.CDRom.Tray), trays))
		}
	}
	return errs
}

// validateDiskDriver checks the host-side driver settings of a disk.
func validateDiskDriver(d *kubevirtv1.Disk, diskPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, ValidateDiskCache(d.Cache, diskPath.Child("cache"))...)
	errs = append(errs, ValidateDiskIO(d.IO, diskPath.Child("io"))...)
	if d.ErrorPolicy != nil && !contains(errorModes, *d.ErrorPolicy) {
		errs = append(errs, field.NotSupported(diskPath.Child("errorPolicy"), string(*d.ErrorPolicy), errorModes))
	}
	return errs
}

// validateBootOrder requires boot orders to be positive and unique across disks and interfaces:
// firmware boots the lowest first, and two devices in one place make the order ambiguous.
func validateBootOrder(devices *kubevirtv1.Devices, devicesPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[int32]bool{}
	checkOne := func(order *int32, orderPath *field.Path) {
		if order == nil {
			return
		}
		if *order < 1 {
			errs = append(errs, field.Invalid(orderPath, *order, "must be greater than 0"))
			return
		}
		if seen[*order] {
			errs = append(errs, field.Duplicate(orderPath, *order))
			return
		}
		seen[*order] = true
	}
	for i := range devices.Disks {
		checkOne(devices.Disks[i].BootOrder, devicesPath.Child("disks").Index(i).Child("bootOrder"))
	}
	for i := range devices.Interfaces {
		checkOne(devices.Interfaces[i].BootOrder, devicesPath.Child("interfaces").Index(i).Child("bootOrder"))
	}
	return errs
}
