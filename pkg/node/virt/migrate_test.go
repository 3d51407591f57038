package virt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDisksToCopy(t *testing.T) {
	const dom = `<domain type='qemu'><name>ns_vm</name><devices>
  <disk type='file' device='disk'><driver name='qemu' type='qcow2'/>
    <source file='/var/run/nativevirt-disks/containerdisk/overlay.qcow2'/>
    <backingStore type='file'><format type='raw'/><source file='/var/run/nativevirt-disks/containerdisk/disk.img'/></backingStore>
    <target dev='vda' bus='virtio'/></disk>
  <disk type='file' device='disk'><source file='/var/run/nativevirt-disks/scratch/disk.img'/><target dev='vdb' bus='virtio'/></disk>
  <disk type='file' device='cdrom'><source file='/var/run/nativevirt-disks/cloudinit/cloudinit.iso'/><target dev='sda' bus='sata'/><readonly/></disk>
  <disk type='file' device='disk'><source file='/var/run/nativevirt-disks/ro/disk.img'/><target dev='vdc' bus='virtio'/><readonly/></disk>
  <disk type='file' device='disk'><source file='/var/run/kubevirt-private/vmi-disks/shared/disk.img'/><target dev='vdd' bus='virtio'/></disk>
  <disk type='block' device='disk'><source dev='/dev/data'/><target dev='vde' bus='virtio'/></disk>
  <disk type='file' device='disk'><source file='/var/run/nativevirt-disks/shared/disk.img'/><target dev='vdf' bus='virtio'/><shareable/></disk>
  <disk type='file' device='disk'><source file='/var/run/nativevirt-disks-other/x/disk.img'/><target dev='vdg' bus='virtio'/></disk>
</devices></domain>`
	got, err := DisksToCopy([]byte(dom), "/var/run/nativevirt-disks")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"vda", "vdb"}, got); diff != "" {
		t.Errorf("disks to copy (-want +got):\n%s", diff)
	}
	if got, err := DisksToCopy([]byte(dom), ""); err != nil || got != nil {
		t.Errorf("no directory: %v, %v; want nothing copied", got, err)
	}
	if _, err := DisksToCopy([]byte("<domain"), "/x"); err == nil {
		t.Error("broken XML: want an error")
	}
}
