package virt

import (
	"fmt"

	"libvirt.org/go/libvirt"
)

// DomainStats are a running domain's counters, as libvirt reports them (virConnectGetAllDomainStats).
// Counters libvirt did not report are absent: nil pointers, missing entries.
type DomainStats struct {
	// CPUTime, CPUUser and CPUSystem are QEMU's CPU time in nanoseconds: in all, in user and in
	// kernel mode.
	CPUTime, CPUUser, CPUSystem *uint64
	// VCPUTime are the nanoseconds each vCPU ran, by vCPU number.
	VCPUTime map[int]uint64
	// Memory is in bytes.
	Memory MemoryStats
	// Interfaces and Disks are by libvirt's device names (tap0, vda); Named gives them the VMI's.
	Interfaces map[string]InterfaceStats
	Disks      map[string]DiskStats
}

// MemoryStats are the balloon driver's figures, in bytes; the guest reports some only with a
// balloon driver that has statistics enabled.
type MemoryStats struct {
	// Maximum is the domain's memory; Current what the balloon leaves the guest.
	Maximum, Current *uint64
	// RSS is QEMU's resident set on the host.
	RSS *uint64
	// Available, Unused and Usable are the guest's view.
	Available, Unused, Usable *uint64
}

// InterfaceStats count a network interface's traffic as the host sees it.
type InterfaceStats struct {
	RxBytes, RxPackets, RxErrors, RxDropped uint64
	TxBytes, TxPackets, TxErrors, TxDropped uint64
}

// DiskStats count a disk's requests; times are nanoseconds.
type DiskStats struct {
	ReadRequests, ReadBytes, ReadTime    uint64
	WriteRequests, WriteBytes, WriteTime uint64
	FlushRequests, FlushTime             uint64
}

// statsTypes are the groups of counters Stats asks for.
const statsTypes = libvirt.DOMAIN_STATS_CPU_TOTAL | libvirt.DOMAIN_STATS_BALLOON | libvirt.DOMAIN_STATS_VCPU |
	libvirt.DOMAIN_STATS_INTERFACE | libvirt.DOMAIN_STATS_BLOCK

// Stats implements Inspector.
func (c inspectorConn) Stats(name string) (DomainStats, error) {
	var out DomainStats
	err := c.withDomain(name, func(d *libvirt.Domain) error {
		all, err := c.conn.GetAllDomainStats([]*libvirt.Domain{d}, statsTypes, 0)
		if err != nil {
			return wrap(name, "reading the statistics of", err)
		}
		if len(all) != 1 {
			return fmt.Errorf("reading the statistics of domain %s: libvirt returned %d records", name, len(all))
		}
		defer func() { _ = all[0].Domain.Free() }()
		out = statsOf(&all[0])
		return nil
	})
	return out, err
}

// statsOf converts libvirt's record.
func statsOf(s *libvirt.DomainStats) DomainStats {
	out := DomainStats{VCPUTime: map[int]uint64{}, Interfaces: map[string]InterfaceStats{}, Disks: map[string]DiskStats{}}
	set := func(ok bool, v uint64) *uint64 {
		if !ok {
			return nil
		}
		return &v
	}
	kib := func(ok bool, v uint64) *uint64 { return set(ok, v*1024) }
	if c := s.Cpu; c != nil {
		out.CPUTime, out.CPUUser, out.CPUSystem = set(c.TimeSet, c.Time), set(c.UserSet, c.User), set(c.SystemSet, c.System)
	}
	if b := s.Balloon; b != nil {
		out.Memory = MemoryStats{
			Maximum: kib(b.MaximumSet, b.Maximum), Current: kib(b.CurrentSet, b.Current), RSS: kib(b.RssSet, b.Rss),
			Available: kib(b.AvailableSet, b.Available), Unused: kib(b.UnusedSet, b.Unused), Usable: kib(b.UsableSet, b.Usable),
		}
	}
	for i, v := range s.Vcpu {
		if v.TimeSet {
			out.VCPUTime[i] = v.Time
		}
	}
	for _, n := range s.Net {
		if n.NameSet {
			out.Interfaces[n.Name] = InterfaceStats{
				RxBytes: n.RxBytes, RxPackets: n.RxPkts, RxErrors: n.RxErrs, RxDropped: n.RxDrop,
				TxBytes: n.TxBytes, TxPackets: n.TxPkts, TxErrors: n.TxErrs, TxDropped: n.TxDrop,
			}
		}
	}
	for _, b := range s.Block {
		// libvirt lists a disk's top image first (and its backing images only when asked to,
		// under the same name): the first record of a name is the disk's.
		if _, seen := out.Disks[b.Name]; b.NameSet && !seen {
			out.Disks[b.Name] = DiskStats{
				ReadRequests: b.RdReqs, ReadBytes: b.RdBytes, ReadTime: b.RdTimes,
				WriteRequests: b.WrReqs, WriteBytes: b.WrBytes, WriteTime: b.WrTimes,
				FlushRequests: b.FlReqs, FlushTime: b.FlTimes,
			}
		}
	}
	return out
}

// Named is s with its disks and interfaces named by the VMI's names, which d knows by device
// (DiskTargets, InterfaceTargets); devices of no VMI disk or interface keep libvirt's name.
func (s DomainStats) Named(d *DomainDetails) DomainStats {
	out := s
	out.Disks = renamed(s.Disks, d.DiskTargets)
	out.Interfaces = renamed(s.Interfaces, d.InterfaceTargets)
	return out
}

// renamed rekeys m from devices to the names that byName maps to them.
func renamed[V any](m map[string]V, byName map[string]string) map[string]V {
	names := make(map[string]string, len(byName))
	for name, dev := range byName {
		names[dev] = name
	}
	out := make(map[string]V, len(m))
	for dev, v := range m {
		if name, ok := names[dev]; ok {
			dev = name
		}
		out[dev] = v
	}
	return out
}
