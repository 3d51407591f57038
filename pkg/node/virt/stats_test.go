package virt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"libvirt.org/go/libvirt"
)

// TestStatsNamedByTheVMI: libvirt's record becomes the counters by device, backing images
// skipped and what libvirt did not report left out; Named gives the disks and interfaces the
// VMI's names that the domain's details know, and leaves other devices as libvirt names them.
func TestStatsNamedByTheVMI(t *testing.T) {
	s := statsOf(&libvirt.DomainStats{
		Cpu:     &libvirt.DomainStatsCPU{TimeSet: true, Time: 42},
		Balloon: &libvirt.DomainStatsBalloon{MaximumSet: true, Maximum: 131072, RssSet: true, Rss: 1024},
		Vcpu:    []libvirt.DomainStatsVcpu{{TimeSet: true, Time: 40}},
		Net:     []libvirt.DomainStatsNet{{NameSet: true, Name: "tap0", RxBytes: 10, TxBytes: 20}},
		Block: []libvirt.DomainStatsBlock{
			{NameSet: true, Name: "vda", RdBytes: 512, WrReqs: 3},
			{NameSet: true, Name: "vda", BackingIndexSet: true, BackingIndex: 1, RdBytes: 999},
			{NameSet: true, Name: "sda", FlReqs: 1},
		},
	})
	details, err := ParseDetails([]byte(`<domain><devices>
		<disk><target dev="vda"/><alias name="ua-containerdisk"/></disk>
		<disk><target dev="sda"/></disk>
		<interface><target dev="tap0"/><alias name="ua-default"/></interface>
	</devices></domain>`))
	if err != nil {
		t.Fatal(err)
	}
	got := s.Named(&details)
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
