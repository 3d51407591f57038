package convert

import (
	"strconv"
	"strings"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// HotplugRootPorts is how many PCIe root ports a q35 guest keeps free for hotplugged virtio disks
// (KubeVirt keeps spare root ports for its hotplug too). A PCIe root port takes one device and
// cannot be hotplugged itself, so the ports must exist from the start.
const HotplugRootPorts = 4

// rootPorts gives the explicit pcie-root-port controllers of a q35 guest that may have disks
// hotplugged: one for each PCI device the domain starts with (libvirt places those on free ports
// first) and HotplugRootPorts more. libvirt adds ports of its own only when these do not
// suffice; the explicit indexes follow the implicit pcie-root (index 0).
func rootPorts(vmi *kubevirtv1.VirtualMachineInstance, d *Devices) []Controller {
	if vmi.Spec.Domain.Devices.DisableHotplug || !isQ35(&vmi.Spec.Domain) {
		return nil
	}
	n := pciDevices(d) + HotplugRootPorts
	out := make([]Controller, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, Controller{Type: "pci", Index: strconv.Itoa(i), Model: "pcie-root-port"})
	}
	return out
}

// isQ35 reports whether the guest's machine type is a q35 one.
func isQ35(spec *kubevirtv1.DomainSpec) bool {
	t := kubevirtv1.DefaultMachineType
	if spec.Machine != nil && spec.Machine.Type != "" {
		t = spec.Machine.Type
	}
	return t == "q35" || strings.HasPrefix(t, "pc-q35-")
}

// pciDevices counts (generously: an integrated device counted too costs only a spare port) the
// domain's devices that take a PCIe slot.
func pciDevices(d *Devices) int {
	n := len(d.Interfaces) + len(d.RNGs) + len(d.Videos) + len(d.Sounds)
	for _, disk := range d.Disks {
		if disk.Target.Bus == "virtio" {
			n++
		}
	}
	for _, c := range d.Controllers {
		if c.Type != "pci" && c.Model != "none" {
			n++
		}
	}
	for _, in := range d.Inputs {
		if in.Bus == "virtio" {
			n++
		}
	}
	if len(d.Channels) > 0 {
		n++ // the virtio-serial controller
	}
	if d.Watchdog != nil {
		n++
	}
	if d.MemBalloon != nil && d.MemBalloon.Model != "none" {
		n++
	}
	return n
}
