package agent

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/node/podfs"
)

// SeedCapabilitiesFunc puts the node's QEMU capabilities into the launcher container whose
// libvirt daemon listens on libvirtSocket, before the domain is defined there, so that libvirt
// need not probe QEMU (pkg/node/qemucaps). outcome, called exactly once after the define (also
// a failed one: it releases the container), says whether libvirt used them.
type SeedCapabilitiesFunc func(libvirtSocket string) (outcome func() string, err error)

// noOutcome is the outcome when nothing was seeded by the agent.
func noOutcome() string { return "" }

// seedCapabilities seeds the launcher's QEMU capabilities when the agent has a seeder. A failure
// only costs the probe that seeding saves: it is logged, and the start goes on.
func (p *domainPreparer) seedCapabilities(ctx context.Context, l *launcher) func() string {
	if p.seed == nil {
		return noOutcome
	}
	outcome, err := p.seed(l.fs.Private.Path(podfs.LibvirtSocket))
	if err != nil {
		klog.FromContext(ctx).Info("Could not give the launcher the node's QEMU capabilities: libvirt probes QEMU itself", "err", err)
		return noOutcome
	}
	return outcome
}
