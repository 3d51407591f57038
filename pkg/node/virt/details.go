package virt

import (
	"encoding/xml"
	"strings"

	"libvirt.org/go/libvirt"
)

// DomainDetails are facts of a running domain that libvirt settles when it starts it (the
// machine type behind an alias such as q35) or that change while it runs (the balloon).
type DomainDetails struct {
	// Machine is the machine type QEMU runs (e.g. pc-q35-7.2).
	Machine string
	// Sockets, Cores and Threads are the guest's CPU topology.
	Sockets, Cores, Threads int32
	// CurrentMemory is the guest's memory now, in bytes.
	CurrentMemory int64
	// DiskTargets are the guest's device names (vda, sda) of the VMI's disks, by disk name (the
	// converter's "ua-<name>" aliases).
	DiskTargets map[string]string
	// InterfaceMACs are the MAC addresses of the VMI's interfaces, and InterfaceTargets their
	// host devices (tap0), by interface name.
	InterfaceMACs, InterfaceTargets map[string]string
}

// GuestInterface is a network interface as the guest agent reports it.
type GuestInterface struct {
	// Name is the guest's name of the interface (eth0).
	Name string
	// MAC is its hardware address.
	MAC string
	// IPs are its addresses, without prefix length.
	IPs []string
}

// GuestInterfaces implements Inspector.
func (c inspectorConn) GuestInterfaces(name string) ([]GuestInterface, error) {
	var out []GuestInterface
	err := c.withDomain(name, func(d *libvirt.Domain) error {
		ifaces, err := d.ListAllInterfaceAddresses(libvirt.DOMAIN_INTERFACE_ADDRESSES_SRC_AGENT)
		if err != nil {
			return agentError(name, "listing the guest's interfaces of", err)
		}
		for _, i := range ifaces {
			g := GuestInterface{Name: i.Name, MAC: i.Hwaddr}
			for _, a := range i.Addrs {
				g.IPs = append(g.IPs, a.Addr)
			}
			out = append(out, g)
		}
		return nil
	})
	return out, err
}

// Details implements Inspector.
func (c inspectorConn) Details(name string) (DomainDetails, error) {
	var out DomainDetails
	err := c.do(name, "reading the definition of", func(d *libvirt.Domain) error {
		raw, err := d.GetXMLDesc(0)
		if err != nil {
			return err
		}
		out, err = ParseDetails([]byte(raw))
		return err
	})
	return out, err
}

// ParseDetails reads DomainDetails from a domain's XML.
func ParseDetails(domainXML []byte) (DomainDetails, error) {
	var dom struct {
		OS struct {
			Type struct {
				Machine string `xml:"machine,attr"`
			} `xml:"type"`
		} `xml:"os"`
		VCPU int32 `xml:"vcpu"`
		CPU  struct {
			Topology *struct {
				Sockets int32 `xml:"sockets,attr"`
				Cores   int32 `xml:"cores,attr"`
				Threads int32 `xml:"threads,attr"`
			} `xml:"topology"`
		} `xml:"cpu"`
		CurrentMemory struct {
			Unit  string `xml:"unit,attr"`
			Value int64  `xml:",chardata"`
		} `xml:"currentMemory"`
		Disks      []xmlDevice `xml:"devices>disk"`
		Interfaces []xmlDevice `xml:"devices>interface"`
	}
	if err := xml.Unmarshal(domainXML, &dom); err != nil {
		return DomainDetails{}, err
	}
	out := DomainDetails{Machine: dom.OS.Type.Machine, Sockets: max(dom.VCPU, 1), Cores: 1, Threads: 1,
		CurrentMemory: dom.CurrentMemory.Value * unitBytes(dom.CurrentMemory.Unit),
		DiskTargets:   map[string]string{}, InterfaceMACs: map[string]string{}, InterfaceTargets: map[string]string{}}
	if t := dom.CPU.Topology; t != nil {
		out.Sockets, out.Cores, out.Threads = t.Sockets, t.Cores, t.Threads
	}
	for _, d := range dom.Disks {
		if name, ok := d.vmiName(); ok && d.Target.Dev != "" {
			out.DiskTargets[name] = d.Target.Dev
		}
	}
	for _, i := range dom.Interfaces {
		name, ok := i.vmiName()
		if ok && i.MAC.Address != "" {
			out.InterfaceMACs[name] = i.MAC.Address
		}
		if ok && i.Target.Dev != "" {
			out.InterfaceTargets[name] = i.Target.Dev
		}
	}
	return out, nil
}

// xmlDevice is what the agent reads of a disk or an interface in a domain's XML.
type xmlDevice struct {
	Target struct {
		Dev string `xml:"dev,attr"`
	} `xml:"target"`
	MAC struct {
		Address string `xml:"address,attr"`
	} `xml:"mac"`
	Alias struct {
		Name string `xml:"name,attr"`
	} `xml:"alias"`
}

// vmiName is the name of the VMI's disk or interface the device is: the converter's alias is
// "ua-<name>".
func (d xmlDevice) vmiName() (string, bool) {
	return strings.CutPrefix(d.Alias.Name, "ua-")
}

// unitBytes is the size of a libvirt memory unit (KiB when absent).
func unitBytes(unit string) int64 {
	switch strings.ToLower(unit) {
	case "b", "bytes":
		return 1
	case "mib", "m":
		return 1 << 20
	case "gib", "g":
		return 1 << 30
	}
	return 1 << 10
}
