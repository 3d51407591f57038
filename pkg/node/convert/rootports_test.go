package convert

import (
	"strconv"
	"testing"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestRootPorts(t *testing.T) {
	devs := &Devices{
		Disks:       []Disk{{Target: DiskTarget{Bus: "virtio"}}, {Target: DiskTarget{Bus: "sata"}}},
		Controllers: []Controller{{Type: "scsi", Model: "virtio-scsi"}, {Type: "usb", Model: "none"}},
		Interfaces:  []Interface{{}},
		Channels:    []Channel{{}},
		MemBalloon:  &MemBalloon{Model: "virtio"},
	}
	// virtio disk, scsi controller, interface, virtio-serial, balloon.
	const devices = 5
	tests := []struct {
		name    string
		machine string
		disable bool
		want    int
	}{
		{name: "q35 default", want: devices + HotplugRootPorts},
		{name: "versioned q35", machine: "pc-q35-rhel9.6.0", want: devices + HotplugRootPorts},
		{name: "i440fx has no PCIe root ports", machine: "pc"},
		{name: "hotplug disabled", disable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := &kubevirtv1.VirtualMachineInstance{}
			if tt.machine != "" {
				vmi.Spec.Domain.Machine = &kubevirtv1.Machine{Type: tt.machine}
			}
			vmi.Spec.Domain.Devices.DisableHotplug = tt.disable
			got := rootPorts(vmi, devs)
			if len(got) != tt.want {
				t.Fatalf("%d root ports, want %d", len(got), tt.want)
			}
			for i, c := range got {
				if c.Type != "pci" || c.Model != "pcie-root-port" || c.Index != strconv.Itoa(i+1) {
					t.Errorf("controller %d: %+v", i, c)
				}
			}
		})
	}
}
