package convert

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// diskBuses collects which controllers the disks need.
type diskBuses struct {
	// scsi: a virtio-scsi controller.
	scsi bool
	// usb: a USB controller.
	usb bool
}

// deviceName is the guest device name of the index-th (from 0) device with
// the prefix: vda … vdz, vdaa …, as the Linux kernel names them.
func deviceName(prefix string, index int) string {
	name := ""
	for index >= 0 {
		name = string(rune('a'+index%26)) + name
		index = index/26 - 1
	}
	return prefix + name
}

// diskPrefix is the device name prefix of a bus.
func diskPrefix(bus kubevirtv1.DiskBus) string {
	if bus == kubevirtv1.DiskBusVirtio {
		return "vd"
	}
	return "sd"
}

var pciAddressPattern = regexp.MustCompile(`^([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-1][0-9a-fA-F])\.([0-7])$`)

// pciAddress parses a PCI address like 0000:81:01.0.
func pciAddress(s string) (*Address, bool) {
	m := pciAddressPattern.FindStringSubmatch(s)
	if m == nil {
		return nil, false
	}
	return &Address{Type: "pci", Domain: "0x" + m[1], Bus: "0x" + m[2], Slot: "0x" + m[3], Function: "0x" + m[4]}, true
}

// bootOrder converts a boot order (positive) to libvirt's <boot>.
func bootOrder(order *int32, p *field.Path) (*Boot, *field.Error) {
	if order == nil {
		return nil, nil
	}
	if *order < 1 {
		return nil, field.Invalid(p, *order, "must be greater than 0")
	}
	return &Boot{Order: uint32(*order)}, nil
}

// convertDisks gives the domain's disks, in the order of spec.domain.devices.disks,
// each backed by the volume of the same name. threads assigns I/O threads
// (see ioThreadPlan); vcpus sizes multi-queue virtio disks.
func convertDisks(vmi *kubevirtv1.VirtualMachineInstance, c Context, threads ioThreadPlan, vcpus uint32) ([]Disk, diskBuses, field.ErrorList) {
	spec := &vmi.Spec
	p := field.NewPath("spec", "domain", "devices", "disks")
	volumes := make(map[string]*kubevirtv1.Volume, len(spec.Volumes))
	for i := range spec.Volumes {
		volumes[spec.Volumes[i].Name] = &spec.Volumes[i]
	}
	volumeIndex := make(map[string]int, len(spec.Volumes))
	for i := range spec.Volumes {
		volumeIndex[spec.Volumes[i].Name] = i
	}
	transitional := spec.Domain.Devices.UseVirtioTransitional != nil && *spec.Domain.Devices.UseVirtioTransitional
	multiQueue := spec.Domain.Devices.BlockMultiQueue != nil && *spec.Domain.Devices.BlockMultiQueue
	counters := map[string]int{}
	var (
		disks []Disk
		buses diskBuses
		errs  field.ErrorList
	)
	for i := range spec.Domain.Devices.Disks {
		d := &spec.Domain.Devices.Disks[i]
		dp := p.Index(i)
		vol, ok := volumes[d.Name]
		if !ok {
			errs = append(errs, field.NotFound(dp.Child("name"), d.Name))
			continue
		}
		src, err := volumeSource(vol, c, field.NewPath("spec", "volumes").Index(volumeIndex[d.Name]))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		disk, bus, derrs := convertDisk(d, src, dp)
		if len(derrs) > 0 {
			errs = append(errs, derrs...)
			continue
		}
		switch bus {
		case kubevirtv1.DiskBusSCSI:
			buses.scsi = true
		case kubevirtv1.DiskBusUSB:
			buses.usb = true
		case kubevirtv1.DiskBusVirtio:
			if transitional {
				disk.Model = "virtio-transitional"
			}
			disk.Driver.IOThread = threads.disks[d.Name]
			if multiQueue {
				disk.Driver.Queues = vcpus
			}
		}
		prefix := diskPrefix(bus)
		disk.Target.Dev = deviceName(prefix, counters[prefix])
		counters[prefix]++
		disks = append(disks, disk)
	}
	return disks, buses, errs
}

// convertDisk converts one disk given its source; the target device name
// is filled in by the caller.
func convertDisk(d *kubevirtv1.Disk, src diskSource, p *field.Path) (Disk, kubevirtv1.DiskBus, field.ErrorList) {
	out := Disk{Type: "file", Device: "disk", Alias: &Alias{Name: "ua-" + d.Name}}
	source := &DiskSource{File: src.path}
	if src.block {
		out.Type, source = "block", &DiskSource{Dev: src.path}
	}
	if d.LUN != nil {
		return Disk{}, "", field.ErrorList{field.Forbidden(p.Child("lun"), "LUN disks are not supported")}
	}
	bus, readOnly, errs := diskTarget(d, &out, p)
	if out.Target.Tray == "open" {
		source = nil
	}
	out.Target.Bus = string(bus)
	out.Source = source
	format := attachStorage(&out, src, readOnly)
	driver, derrs := diskDriver(d, format, p)
	if src.shared && driver.Cache == "" {
		// libvirt migrates a disk it does not copy only with the host cache off
		// (KubeVirt sets cache none on shared claims too).
		driver.Cache = string(kubevirtv1.CacheNone)
	}
	out.Driver = driver
	errs = append(errs, derrs...)
	boot, err := bootOrder(d.BootOrder, p.Child("bootOrder"))
	if err != nil {
		errs = append(errs, err)
	}
	out.Boot = boot
	out.Serial = d.Serial
	if d.Shareable != nil && *d.Shareable {
		out.Shareable = &struct{}{}
	}
	if d.ChangedBlockTracking != nil && *d.ChangedBlockTracking {
		errs = append(errs, field.Forbidden(p.Child("changedBlockTracking"), "changed block tracking is not supported"))
	}
	blockIO, berrs := diskBlockIO(d.BlockSize, p.Child("blockSize"))
	out.BlockIO = blockIO
	errs = append(errs, berrs...)
	return out, bus, errs
}

// diskTarget fills in out's device kind, tray and PCI address from the disk's cdrom or disk
// target, and returns its bus and whether the target is read-only.
func diskTarget(d *kubevirtv1.Disk, out *Disk, p *field.Path) (kubevirtv1.DiskBus, bool, field.ErrorList) {
	var errs field.ErrorList
	if c := d.CDRom; c != nil {
		out.Device = "cdrom"
		bus := c.Bus
		if bus == "" {
			bus = kubevirtv1.DiskBusSATA
		}
		if bus != kubevirtv1.DiskBusSATA && bus != kubevirtv1.DiskBusSCSI {
			errs = append(errs, field.NotSupported(p.Child("cdrom", "bus"), bus, []string{"sata", "scsi"}))
		}
		if c.Tray == kubevirtv1.TrayStateOpen {
			out.Target.Tray = "open"
		}
		return bus, enabled(c.ReadOnly), errs
	}
	target := d.Disk
	if target == nil {
		target = &kubevirtv1.DiskTarget{}
	}
	bus := target.Bus
	if bus == "" {
		bus = kubevirtv1.DiskBusVirtio
	}
	switch bus {
	case kubevirtv1.DiskBusVirtio, kubevirtv1.DiskBusSATA, kubevirtv1.DiskBusSCSI, kubevirtv1.DiskBusUSB:
	default:
		errs = append(errs, field.NotSupported(p.Child("disk", "bus"), bus, []string{"virtio", "sata", "scsi", "usb"}))
	}
	if target.PciAddress != "" {
		addr, ok := pciAddress(target.PciAddress)
		switch {
		case !ok:
			errs = append(errs, field.Invalid(p.Child("disk", "pciAddress"), target.PciAddress, "must be a PCI address like 0000:81:01.0"))
		case bus != kubevirtv1.DiskBusVirtio:
			errs = append(errs, field.Invalid(p.Child("disk", "pciAddress"), target.PciAddress, "only virtio disks take a PCI address"))
		default:
			out.Address = addr
		}
	}
	return bus, target.ReadOnly, errs
}

// attachStorage makes out read-only, a qcow2 overlay over its image, or transient, as the
// disk and its source say, and returns the format QEMU reads the disk's source in.
func attachStorage(out *Disk, src diskSource, readOnly bool) DiskFormat {
	switch {
	case readOnly || (src.readOnly && !src.transient):
		out.ReadOnly = &struct{}{}
	case src.overlay != "" && out.Device == "disk":
		out.Source = &DiskSource{File: src.overlay}
		out.BackingStore = &BackingStore{Type: "file", Format: BackingFormat{Type: string(src.format)}, Source: DiskSource{File: src.path}}
		return FormatQCOW2
	case src.transient && out.Device == "disk":
		out.Transient = &struct{}{}
	}
	return src.format
}

// diskDriver gives the QEMU driver settings of a disk: format, cache and
// I/O modes, error policy.
func diskDriver(d *kubevirtv1.Disk, format DiskFormat, p *field.Path) (*DiskDriver, field.ErrorList) {
	var errs field.ErrorList
	drv := &DiskDriver{Name: "qemu", Type: string(format)}
	switch d.Cache {
	case "", kubevirtv1.CacheNone, kubevirtv1.CacheWriteThrough, kubevirtv1.CacheWriteBack:
		drv.Cache = string(d.Cache)
	default:
		errs = append(errs, field.NotSupported(p.Child("cache"), d.Cache, []string{"none", "writethrough", "writeback"}))
	}
	switch d.IO {
	case "", kubevirtv1.IOThreads:
		drv.IO = string(d.IO)
	case kubevirtv1.IONative:
		if d.Cache != kubevirtv1.CacheNone {
			errs = append(errs, field.Invalid(p.Child("io"), d.IO, "io native needs cache none"))
		}
		drv.IO = string(d.IO)
	default:
		errs = append(errs, field.NotSupported(p.Child("io"), d.IO, []string{"native", "threads"}))
	}
	if d.ErrorPolicy != nil {
		switch *d.ErrorPolicy {
		case kubevirtv1.DiskErrorPolicyStop, kubevirtv1.DiskErrorPolicyIgnore, kubevirtv1.DiskErrorPolicyReport, kubevirtv1.DiskErrorPolicyEnospace:
			drv.ErrorPolicy = string(*d.ErrorPolicy)
		default:
			errs = append(errs, field.NotSupported(p.Child("errorPolicy"), *d.ErrorPolicy, []string{"stop", "ignore", "report", "enospace"}))
		}
	}
	return drv, errs
}

// diskBlockIO gives custom block sizes. Taking them from the volume needs
// probing it on the node, which the converter does not do.
func diskBlockIO(b *kubevirtv1.BlockSize, p *field.Path) (*BlockIO, field.ErrorList) {
	if b == nil {
		return nil, nil
	}
	var errs field.ErrorList
	if b.MatchVolume != nil && enabled(b.MatchVolume.Enabled) {
		errs = append(errs, field.Forbidden(p.Child("matchVolume"), "block sizes matching the volume are not supported"))
	}
	c := b.Custom
	if c == nil {
		return nil, errs
	}
	var discard *uint32
	if g := c.DiscardGranularity; g != nil {
		// A whole number of logical blocks (512 bytes unless set), as QEMU requires.
		unit := int32(512)
		if c.Logical > 0 {
			unit = c.Logical
		}
		if *g < 0 || *g%unit != 0 {
			errs = append(errs, field.Invalid(p.Child("custom", "discardGranularity"), *g,
				fmt.Sprintf("must be 0 or a multiple of the logical block size (%d)", unit)))
		} else {
			v := uint32(*g)
			discard = &v
		}
	}
	for _, s := range []struct {
		name  string
		value int32
	}{{"logical", c.Logical}, {"physical", c.Physical}} {
		if s.value < 0 || s.value > 0 && (s.value < 512 || s.value&(s.value-1) != 0) {
			errs = append(errs, field.Invalid(p.Child("custom", s.name), s.value, "must be a power of two of at least 512"))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if c.Logical == 0 && c.Physical == 0 && discard == nil {
		return nil, nil
	}
	return &BlockIO{LogicalBlockSize: uint32(c.Logical), PhysicalBlockSize: uint32(c.Physical), DiscardGranularity: discard}, nil
}
