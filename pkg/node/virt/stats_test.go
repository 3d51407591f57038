package virt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"libvirt.org/go/libvirt"
)

// TestStatsNameDevicesByTheVMI: libvirt names disks and interfaces by their target devices;
// the statistics name them by the VMI's disks and interfaces (the converter's "ua-" aliases),
// skip backing images, and leave out what libvirt did not report.
func TestStatsNameDevicesByTheVMI(t *testing.T) {
	aliases, err := deviceAliases(`<domain><devices>
		<disk><target dev="vda"/><alias name="ua-containerdisk"/></disk>
		<disk><target dev="sda"/></disk>
		<interface><target dev="tap0"/><alias name="ua-default"/></interface>
	</devices></domain>`)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"vda": "containerdisk", "tap0": "default"}, aliases); diff != "" {
		t.Errorf("aliases (-want +got):\n%s", diff)
	}
	got := statsOf(&libvirt.DomainStats{
		Cpu:     &libvirt.DomainStatsCPU{TimeSet: true, Time: 42},
		Balloon: &libvirt.DomainStatsBalloon{MaximumSet: true, Maximum: 131072, RssSet: true, Rss: 1024},
		Vcpu:    []libvirt.DomainStatsVcpu{{TimeSet: true, Time: 40}},
		Net:     []libvirt.DomainStatsNet{{NameSet: true, Name: "tap0", RxBytes: 10, TxBytes: 20}},
		Block: []libvirt.DomainStatsBlock{
			{NameSet: true, Name: "vda", RdBytes: 512, WrReqs: 3},
			{NameSet: true, Name: "vda", BackingIndexSet: true, BackingIndex: 1, RdBytes: 999},
			{NameSet: true, Name: "sda", FlReqs: 1},
		},
	}, aliases)
	u := func(v uint64) *uint64 { return &v }
	want := DomainStats{
		CPUTime:    u(42),
		VCPUTime:   map[int]uint64{0: 40},
		Memory:     MemoryStats{Maximum: u(128 << 20), RSS: u(1 << 20)},
		Interfaces: map[string]InterfaceStats{"default": {RxBytes: 10, TxBytes: 20}},
		Disks:      map[string]DiskStats{"containerdisk": {ReadBytes: 512, WriteRequests: 3}, "sda": {FlushRequests: 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}
