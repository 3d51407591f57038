package convert

import (
	"strings"
	"testing"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestHotplugDisk(t *testing.T) {
	tests := []struct {
		name  string
		disk  kubevirtv1.Disk
		block bool
		inUse []string
		want  []string
	}{
		{name: "virtio file after vda and vdb", inUse: []string{"vda", "vdb", "sda"},
			disk: kubevirtv1.Disk{Name: "data", Serial: "S1", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}},
			want: []string{`<disk type="file" device="disk">`, `<source file="/var/run/nativevirt-hotplug/data.img" fdgroup="hp-data">`,
				`<target dev="vdc" bus="virtio">`, `<serial>S1</serial>`, `<alias name="ua-data">`, `type="raw"`}},
		{name: "scsi block, first free name", inUse: []string{"vda"},
			disk: kubevirtv1.Disk{Name: "blk", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusSCSI}}}, block: true,
			want: []string{`<disk type="block" device="disk">`, `<source dev="/dev/hotplug-blk">`, `<target dev="sda" bus="scsi">`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, _, err := HotplugDisk(&tt.disk, tt.block, tt.inUse)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(raw), w) {
					t.Errorf("XML %s lacks %s", raw, w)
				}
			}
		})
	}
	sata := kubevirtv1.Disk{Name: "s", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusSATA}}}
	if _, _, err := HotplugDisk(&sata, false, nil); err == nil {
		t.Error("a sata disk was accepted for hotplug")
	}
}
