package convert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestDeviceName(t *testing.T) {
	tests := []struct {
		prefix string
		index  int
		want   string
	}{
		{"vd", 0, "vda"}, {"vd", 25, "vdz"}, {"sd", 26, "sdaa"}, {"sd", 27, "sdab"}, {"vd", 701, "vdzz"}, {"vd", 702, "vdaaa"},
	}
	for _, tc := range tests {
		if got := deviceName(tc.prefix, tc.index); got != tc.want {
			t.Errorf("deviceName(%q, %d) = %q, want %q", tc.prefix, tc.index, got, tc.want)
		}
	}
}

func TestPCIAddress(t *testing.T) {
	tests := []struct {
		in   string
		want *Address
	}{
		{"0000:81:01.0", &Address{Type: "pci", Domain: "0x0000", Bus: "0x81", Slot: "0x01", Function: "0x0"}},
		{"0000:00:1f.7", &Address{Type: "pci", Domain: "0x0000", Bus: "0x00", Slot: "0x1f", Function: "0x7"}},
		{"0000:00:20.0", nil},
		{"00:01.0", nil},
		{"0000:00:01.8", nil},
	}
	for _, tc := range tests {
		got, ok := pciAddress(tc.in)
		if ok != (tc.want != nil) {
			t.Errorf("pciAddress(%q) ok = %v", tc.in, ok)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("pciAddress(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestConvertDisk(t *testing.T) {
	file := diskSource{path: "/img", format: FormatRaw}
	overlay := diskSource{path: "/img", format: FormatQCOW2, overlay: "/overlay.qcow2"}
	transient := diskSource{path: "/img", format: FormatRaw, transient: true}
	raw := &DiskDriver{Name: "qemu", Type: "raw"}
	tests := []struct {
		name    string
		disk    kubevirtv1.Disk
		src     diskSource
		want    Disk
		wantBus kubevirtv1.DiskBus
		wantErr string
	}{{
		name:    "no device: a virtio disk",
		disk:    kubevirtv1.Disk{Name: "d"},
		src:     file,
		want:    Disk{Type: "file", Device: "disk", Driver: raw, Source: &DiskSource{File: "/img"}, Target: DiskTarget{Bus: "virtio"}, Alias: &Alias{Name: "ua-d"}},
		wantBus: kubevirtv1.DiskBusVirtio,
	}, {
		name:    "shared claim: host cache off",
		disk:    kubevirtv1.Disk{Name: "d"},
		src:     diskSource{path: "/img", format: FormatRaw, shared: true},
		want:    Disk{Type: "file", Device: "disk", Driver: &DiskDriver{Name: "qemu", Type: "raw", Cache: "none"}, Source: &DiskSource{File: "/img"}, Target: DiskTarget{Bus: "virtio"}, Alias: &Alias{Name: "ua-d"}},
		wantBus: kubevirtv1.DiskBusVirtio,
	}, {
		name:    "shared claim: the user's cache mode wins",
		disk:    kubevirtv1.Disk{Name: "d", Cache: kubevirtv1.CacheWriteThrough},
		src:     diskSource{path: "/img", format: FormatRaw, shared: true},
		want:    Disk{Type: "file", Device: "disk", Driver: &DiskDriver{Name: "qemu", Type: "raw", Cache: "writethrough"}, Source: &DiskSource{File: "/img"}, Target: DiskTarget{Bus: "virtio"}, Alias: &Alias{Name: "ua-d"}},
		wantBus: kubevirtv1.DiskBusVirtio,
	}, {
		name: "writable disk over a transient source gets a throw-away overlay",
		disk: kubevirtv1.Disk{Name: "d", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "sata"}}},
		src:  transient,
		want: Disk{Type: "file", Device: "disk", Driver: raw, Source: &DiskSource{File: "/img"},
			Target: DiskTarget{Bus: "sata"}, Transient: &struct{}{}, Alias: &Alias{Name: "ua-d"}},
		wantBus: kubevirtv1.DiskBusSATA,
	}, {
		name: "writable disk over a container disk writes to its qcow2 overlay",
		disk: kubevirtv1.Disk{Name: "d", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "virtio"}}},
		src:  diskSource{path: "/img", format: FormatRaw, overlay: "/overlay.qcow2"},
		want: Disk{Type: "file", Device: "disk", Driver: &DiskDriver{Name: "qemu", Type: "qcow2"}, Source: &DiskSource{File: "/overlay.qcow2"},
			BackingStore: &BackingStore{Type: "file", Format: BackingFormat{Type: "raw"}, Source: DiskSource{File: "/img"}},
			Target:       DiskTarget{Bus: "virtio"}, Alias: &Alias{Name: "ua-d"}},
		wantBus: kubevirtv1.DiskBusVirtio,
	}, {
		name: "read-only disk needs no overlay",
		disk: kubevirtv1.Disk{Name: "d", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "virtio", ReadOnly: true}}},
		src:  overlay,
		want: Disk{Type: "file", Device: "disk", Driver: &DiskDriver{Name: "qemu", Type: "qcow2"}, Source: &DiskSource{File: "/img"},
			Target: DiskTarget{Bus: "virtio"}, ReadOnly: &struct{}{}, Alias: &Alias{Name: "ua-d"}},
		wantBus: kubevirtv1.DiskBusVirtio,
	}, {
		name: "read-only source makes a read-only disk",
		disk: kubevirtv1.Disk{Name: "d"},
		src:  diskSource{block: true, path: "/dev/d", format: FormatRaw, readOnly: true},
		want: Disk{Type: "block", Device: "disk", Driver: raw, Source: &DiskSource{Dev: "/dev/d"},
			Target: DiskTarget{Bus: "virtio"}, ReadOnly: &struct{}{}, Alias: &Alias{Name: "ua-d"}},
		wantBus: kubevirtv1.DiskBusVirtio,
	}, {
		name: "CD-ROM: read-only by default, no overlay",
		disk: kubevirtv1.Disk{Name: "cd", BootOrder: ptr(int32(1)), DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{}}},
		src:  overlay,
		want: Disk{Type: "file", Device: "cdrom", Driver: &DiskDriver{Name: "qemu", Type: "qcow2"}, Source: &DiskSource{File: "/img"},
			Target: DiskTarget{Bus: "sata"}, ReadOnly: &struct{}{}, Boot: &Boot{Order: 1}, Alias: &Alias{Name: "ua-cd"}},
		wantBus: kubevirtv1.DiskBusSATA,
	}, {
		name:    "CD-ROM with an open tray has no medium",
		disk:    kubevirtv1.Disk{Name: "cd", DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{Bus: "scsi", Tray: "open", ReadOnly: ptr(false)}}},
		src:     file,
		want:    Disk{Type: "file", Device: "cdrom", Driver: raw, Target: DiskTarget{Bus: "scsi", Tray: "open"}, Alias: &Alias{Name: "ua-cd"}},
		wantBus: kubevirtv1.DiskBusSCSI,
	}, {
		name: "driver modes, serial, shareable, block sizes, PCI address",
		disk: kubevirtv1.Disk{
			Name: "d", Serial: "SN1", Cache: "none", IO: "native", ErrorPolicy: ptr(kubevirtv1.DiskErrorPolicyStop), Shareable: ptr(true),
			BlockSize:  &kubevirtv1.BlockSize{Custom: &kubevirtv1.CustomBlockSize{Logical: 4096, Physical: 4096}},
			DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{PciAddress: "0000:02:03.0"}},
		},
		src: file,
		want: Disk{Type: "file", Device: "disk", Driver: &DiskDriver{Name: "qemu", Type: "raw", Cache: "none", IO: "native", ErrorPolicy: "stop"},
			Source: &DiskSource{File: "/img"}, Target: DiskTarget{Bus: "virtio"}, BlockIO: &BlockIO{LogicalBlockSize: 4096, PhysicalBlockSize: 4096},
			Shareable: &struct{}{}, Serial: "SN1", Alias: &Alias{Name: "ua-d"},
			Address: &Address{Type: "pci", Domain: "0x0000", Bus: "0x02", Slot: "0x03", Function: "0x0"}},
		wantBus: kubevirtv1.DiskBusVirtio,
	}, {
		name:    "LUN refused",
		disk:    kubevirtv1.Disk{Name: "l", DiskDevice: kubevirtv1.DiskDevice{LUN: &kubevirtv1.LunTarget{}}},
		src:     file,
		wantErr: "disks[0].lun",
	}, {
		name:    "unknown bus",
		disk:    kubevirtv1.Disk{Name: "d", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "ide"}}},
		src:     file,
		wantErr: "disks[0].disk.bus",
	}, {
		name:    "virtio CD-ROM",
		disk:    kubevirtv1.Disk{Name: "d", DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{Bus: "virtio"}}},
		src:     file,
		wantErr: "disks[0].cdrom.bus",
	}, {
		name:    "PCI address on SATA",
		disk:    kubevirtv1.Disk{Name: "d", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "sata", PciAddress: "0000:02:03.0"}}},
		src:     file,
		wantErr: "only virtio disks",
	}, {
		name:    "malformed PCI address",
		disk:    kubevirtv1.Disk{Name: "d", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{PciAddress: "2:3"}}},
		src:     file,
		wantErr: "disks[0].disk.pciAddress",
	}, {
		name:    "native I/O without cache none",
		disk:    kubevirtv1.Disk{Name: "d", IO: "native"},
		src:     file,
		wantErr: "io native needs cache none",
	}, {
		name:    "unknown cache",
		disk:    kubevirtv1.Disk{Name: "d", Cache: "unsafe"},
		src:     file,
		wantErr: "disks[0].cache",
	}, {
		name:    "boot order 0",
		disk:    kubevirtv1.Disk{Name: "d", BootOrder: ptr(int32(0))},
		src:     file,
		wantErr: "disks[0].bootOrder",
	}, {
		name:    "block size not a power of two",
		disk:    kubevirtv1.Disk{Name: "d", BlockSize: &kubevirtv1.BlockSize{Custom: &kubevirtv1.CustomBlockSize{Logical: 1000}}},
		src:     file,
		wantErr: "blockSize.custom.logical",
	}, {
		name:    "block size matching the volume",
		disk:    kubevirtv1.Disk{Name: "d", BlockSize: &kubevirtv1.BlockSize{MatchVolume: &kubevirtv1.FeatureState{}}},
		src:     file,
		wantErr: "blockSize.matchVolume",
	}, {
		name: "discard granularity",
		disk: kubevirtv1.Disk{Name: "d", BlockSize: &kubevirtv1.BlockSize{Custom: &kubevirtv1.CustomBlockSize{Logical: 512, DiscardGranularity: ptr(int32(4096))}}},
		src:  file,
		want: Disk{Type: "file", Device: "disk", Driver: &DiskDriver{Name: "qemu", Type: "raw"}, Source: &DiskSource{File: "/img"},
			Target: DiskTarget{Bus: "virtio"}, BlockIO: &BlockIO{LogicalBlockSize: 512, DiscardGranularity: ptr(uint32(4096))}, Alias: &Alias{Name: "ua-d"}},
		wantBus: kubevirtv1.DiskBusVirtio,
	}, {
		name: "discard off",
		disk: kubevirtv1.Disk{Name: "d", BlockSize: &kubevirtv1.BlockSize{Custom: &kubevirtv1.CustomBlockSize{DiscardGranularity: ptr(int32(0))}}},
		src:  file,
		want: Disk{Type: "file", Device: "disk", Driver: &DiskDriver{Name: "qemu", Type: "raw"}, Source: &DiskSource{File: "/img"},
			Target: DiskTarget{Bus: "virtio"}, BlockIO: &BlockIO{DiscardGranularity: ptr(uint32(0))}, Alias: &Alias{Name: "ua-d"}},
		wantBus: kubevirtv1.DiskBusVirtio,
	}, {
		name:    "discard granularity not a multiple of the logical block size",
		disk:    kubevirtv1.Disk{Name: "d", BlockSize: &kubevirtv1.BlockSize{Custom: &kubevirtv1.CustomBlockSize{Logical: 4096, DiscardGranularity: ptr(int32(512))}}},
		src:     file,
		wantErr: "discardGranularity",
	}, {
		name:    "changed block tracking",
		disk:    kubevirtv1.Disk{Name: "d", ChangedBlockTracking: ptr(true)},
		src:     file,
		wantErr: "changedBlockTracking",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, bus, errs := convertDisk(&tc.disk, tc.src, field.NewPath("spec", "domain", "devices", "disks").Index(0))
			checkErrs(t, errs, tc.wantErr)
			if tc.wantErr != "" {
				return
			}
			if bus != tc.wantBus {
				t.Errorf("bus = %q, want %q", bus, tc.wantBus)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvertDisksNamesAndBuses(t *testing.T) {
	disk := func(name string, bus kubevirtv1.DiskBus) kubevirtv1.Disk {
		return kubevirtv1.Disk{Name: name, DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: bus}}}
	}
	empty := func(name string) kubevirtv1.Volume {
		return kubevirtv1.Volume{Name: name, VolumeSource: kubevirtv1.VolumeSource{EmptyDisk: &kubevirtv1.EmptyDiskSource{Capacity: qty("1Gi")}}}
	}
	vmi := &kubevirtv1.VirtualMachineInstance{Spec: kubevirtv1.VirtualMachineInstanceSpec{
		Domain: kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{
			UseVirtioTransitional: ptr(true),
			BlockMultiQueue:       ptr(true),
			Disks: []kubevirtv1.Disk{
				disk("a", "virtio"), disk("b", "sata"), disk("c", "scsi"), disk("d", "virtio"), disk("e", "usb"),
				{Name: "f", DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{}}},
			},
		}},
		Volumes: []kubevirtv1.Volume{empty("a"), empty("b"), empty("c"), empty("d"), empty("e"), empty("f")},
	}}
	threads := ioThreadPlan{count: 1, disks: map[string]uint{"d": 1}}
	disks, buses, errs := convertDisks(vmi, Context{}.withDefaults(), threads, 3)
	checkErrs(t, errs, "")
	type summary struct{ Alias, Dev, Bus, Model string }
	var got []summary
	for _, d := range disks {
		got = append(got, summary{d.Alias.Name, d.Target.Dev, d.Target.Bus, d.Model})
	}
	want := []summary{
		{"ua-a", "vda", "virtio", "virtio-transitional"},
		{"ua-b", "sda", "sata", ""},
		{"ua-c", "sdb", "scsi", ""},
		{"ua-d", "vdb", "virtio", "virtio-transitional"},
		{"ua-e", "sdc", "usb", ""},
		{"ua-f", "sdd", "sata", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(diskBuses{scsi: true, usb: true}, buses, cmp.AllowUnexported(diskBuses{})); diff != "" {
		t.Errorf("buses (-want +got):\n%s", diff)
	}
	if d := disks[3].Driver; d.IOThread != 1 || d.Queues != 3 {
		t.Errorf("virtio disk d: iothread %d queues %d, want 1 and 3", d.IOThread, d.Queues)
	}
	if d := disks[0].Driver; d.IOThread != 0 || d.Queues != 3 {
		t.Errorf("virtio disk a: iothread %d queues %d, want 0 and 3", d.IOThread, d.Queues)
	}
	if d := disks[1].Driver; d.Queues != 0 {
		t.Errorf("sata disk b has %d queues", d.Queues)
	}
}

func TestConvertDisksErrors(t *testing.T) {
	tests := []struct {
		name    string
		spec    kubevirtv1.VirtualMachineInstanceSpec
		wantErr string
	}{{
		name:    "disk without a volume",
		spec:    kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{{Name: "lost"}}}}},
		wantErr: `spec.domain.devices.disks[0].name: Not found: "lost"`,
	}, {
		name: "volume error names the volume",
		spec: kubevirtv1.VirtualMachineInstanceSpec{
			Domain:  kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{{Name: "cd"}}}},
			Volumes: []kubevirtv1.Volume{{Name: "other"}, {Name: "cd", VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: "x"}}}},
		},
		wantErr: "spec.volumes[1].containerDisk",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, errs := convertDisks(&kubevirtv1.VirtualMachineInstance{Spec: tc.spec}, Context{}.withDefaults(), ioThreadPlan{}, 1)
			checkErrs(t, errs, tc.wantErr)
		})
	}
}
