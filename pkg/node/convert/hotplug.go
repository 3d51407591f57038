package convert

import (
	"encoding/xml"
	"fmt"
	"path"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// HotplugDir is where a hotplugged image is said to live in the launcher. Nothing is there: the
// node agent opens the image in the attachment pod and hands QEMU the descriptor (fdgroup), so
// the path only names the disk in libvirt's XML.
const HotplugDir = "/var/run/nativevirt-hotplug"

// HotplugFDGroup is the name of the descriptors passed for the hotplugged volume.
func HotplugFDGroup(volume string) string { return "hp-" + volume }

// HotplugBlockNode is the device node of a hotplugged block volume in the launcher's container
// (the node agent makes it there; libvirt passes descriptors only for file-backed disks).
func HotplugBlockNode(volume string) string { return path.Join("/dev", "hotplug-"+volume) }

// HotplugDisk is the libvirt XML of the volume's disk hotplugged into a running domain: its bus,
// serial and cache as the VMI says, its image passed by descriptor (a block device: its node
// HotplugBlockNode), and the first device name of its bus that no disk of the domain uses yet
// (inUse). It is also the XML that detaches it.
func HotplugDisk(d *kubevirtv1.Disk, block bool, inUse []string) (diskXML []byte, target string, err error) {
	src := diskSource{path: path.Join(HotplugDir, d.Name+".img"), format: FormatRaw}
	if block {
		src = diskSource{path: HotplugBlockNode(d.Name), format: FormatRaw, block: true}
	}
	disk, bus, errs := convertDisk(d, src, field.NewPath("spec", "domain", "devices", "disks"))
	if len(errs) > 0 {
		return nil, "", errs.ToAggregate()
	}
	if bus != kubevirtv1.DiskBusVirtio && bus != kubevirtv1.DiskBusSCSI {
		return nil, "", fmt.Errorf("disk %s: bus %s cannot be hotplugged (scsi or virtio)", d.Name, bus)
	}
	if disk.Source != nil && !block {
		disk.Source.FDGroup = HotplugFDGroup(d.Name)
	}
	used := map[string]bool{}
	for _, n := range inUse {
		used[n] = true
	}
	prefix := diskPrefix(bus)
	for i := 0; ; i++ {
		if name := deviceName(prefix, i); !used[name] {
			disk.Target.Dev = name
			break
		}
	}
	disk.Boot = nil
	diskXML, err = xml.Marshal(struct {
		XMLName xml.Name `xml:"disk"`
		Disk
	}{Disk: disk})
	return diskXML, disk.Target.Dev, err
}
