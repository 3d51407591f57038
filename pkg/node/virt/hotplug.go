package virt

import (
	"fmt"
	"os"

	"libvirt.org/go/libvirt"
)

// Hotplugger attaches disks to a running domain and detaches them. The image of an attached
// disk is an open file the caller passes: QEMU gets the descriptor (virDomainFDAssociate under
// the disk's fdgroup), so the launcher never opens a path of its own for it.
type Hotplugger interface {
	// AttachDisk passes file under fdGroup (unless file is nil: a block device node the launcher
	// has) and attaches the disk diskXML to the running domain.
	AttachDisk(name string, diskXML []byte, fdGroup string, file *os.File) error
	// DetachDisk asks the running domain to let go of the disk diskXML (the guest may take a
	// moment to release it; the domain's XML shows when it did).
	DetachDisk(name string, diskXML []byte) error
}

var _ Hotplugger = hotplugConn{}

// hotplugConn is the Hotplugger part of a libvirt connection.
type hotplugConn struct{ *libvirtConn }

// AttachDisk implements Hotplugger.
func (c hotplugConn) AttachDisk(name string, diskXML []byte, fdGroup string, file *os.File) error {
	return c.do(name, "hotplugging a disk into", func(d *libvirt.Domain) error {
		if file != nil {
			if err := d.FDAssociate(fdGroup, []os.File{*file}, 0); err != nil {
				return fmt.Errorf("passing the image descriptor: %w", err)
			}
		}
		return d.AttachDeviceFlags(string(diskXML), libvirt.DOMAIN_DEVICE_MODIFY_LIVE)
	})
}

// DetachDisk implements Hotplugger.
func (c hotplugConn) DetachDisk(name string, diskXML []byte) error {
	return c.do(name, "unplugging a disk from", func(d *libvirt.Domain) error {
		return d.DetachDeviceFlags(string(diskXML), libvirt.DOMAIN_DEVICE_MODIFY_LIVE)
	})
}
