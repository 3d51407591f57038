package virt

import (
	"encoding/xml"
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
	// Interfaces and Disks are by the VMI's interface and disk names (the devices' aliases), or
	// by libvirt's device names where a device has no alias.
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
func (c *libvirtConn) Stats(name string) (DomainStats, error) {
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
		raw, err := d.GetXMLDesc(0)
		if err != nil {
			return wrap(name, "reading the definition of", err)
		}
		aliases, err := deviceAliases(raw)
		if err != nil {
			return fmt.Errorf("reading the device aliases of domain %s: %w", name, err)
		}
		out = statsOf(&all[0], aliases)
		return nil
	})
	return out, err
}

// statsOf converts libvirt's record; aliases maps libvirt's device names to the VMI's.
func statsOf(s *libvirt.DomainStats, aliases map[string]string) DomainStats {
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
	named := func(name string) string {
		if a, ok := aliases[name]; ok {
			return a
		}
		return name
	}
	for _, n := range s.Net {
		if n.NameSet {
			out.Interfaces[named(n.Name)] = InterfaceStats{
				RxBytes: n.RxBytes, RxPackets: n.RxPkts, RxErrors: n.RxErrs, RxDropped: n.RxDrop,
				TxBytes: n.TxBytes, TxPackets: n.TxPkts, TxErrors: n.TxErrs, TxDropped: n.TxDrop,
			}
		}
	}
	for _, b := range s.Block {
		// libvirt lists a disk's top image first (and its backing images only when asked to,
		// under the same name): the first record of a name is the disk's.
		if _, seen := out.Disks[named(b.Name)]; b.NameSet && !seen {
			out.Disks[named(b.Name)] = DiskStats{
				ReadRequests: b.RdReqs, ReadBytes: b.RdBytes, ReadTime: b.RdTimes,
				WriteRequests: b.WrReqs, WriteBytes: b.WrBytes, WriteTime: b.WrTimes,
				FlushRequests: b.FlReqs, FlushTime: b.FlTimes,
			}
		}
	}
	return out
}

// deviceAliases maps the target device names of a domain's disks and interfaces (vda, tap0) to
// the names of the VMI's disks and interfaces, which the converter gives them as aliases
// ("ua-<name>").
func deviceAliases(domainXML string) (map[string]string, error) {
	var dom struct {
		Disks      []xmlDevice `xml:"devices>disk"`
		Interfaces []xmlDevice `xml:"devices>interface"`
	}
	if err := xml.Unmarshal([]byte(domainXML), &dom); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, d := range append(dom.Disks, dom.Interfaces...) {
		if name, ok := d.vmiName(); ok && d.Target.Dev != "" {
			out[d.Target.Dev] = name
		}
	}
	return out, nil
}
