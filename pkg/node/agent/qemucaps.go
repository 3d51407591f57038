package agent

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/node/podfs"
)

// SeedCapabilitiesFunc puts the node's QEMU capabilities into the launcher container whose
// libvirt daemon listens on libvirtSocket, before the domain is defined there, so that libvirt
// need not probe QEMU (pkg/node/qemucaps). outcome, called once after the define, says whether
// libvirt used them.
type SeedCapabilitiesFunc func(libvirtSocket string) (outcome func() string, err error)

// seedCapabilities seeds the launcher's QEMU capabilities when the agent has a seeder. A failure
// only costs the probe that seeding saves: it is logged, and the start goes on. The outcome is
// "" without a seeder.
func (a *Agent) seedCapabilities(ctx context.Context, l *launcher) (outcome func() string) {
	if a.cfg.SeedCapabilities == nil {
		return func() string { return "" }
	}
	outcome, err := a.cfg.SeedCapabilities(l.fs.Private.Path(podfs.LibvirtSocket))
	if err != nil {
		klog.FromContext(ctx).Info("Could not give the launcher the node's QEMU capabilities: libvirt probes QEMU itself", "err", err)
		return func() string { return "" }
	}
	return outcome
}
