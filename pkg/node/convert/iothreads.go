package convert

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// ioThreadPlan assigns libvirt I/O threads (numbered from 1) to virtio disks.
type ioThreadPlan struct {
	// count is the number of I/O threads of the domain.
	count uint
	// disks maps a disk name to its thread; disks not listed use QEMU's
	// main loop.
	disks map[string]uint
}

// planIOThreads follows spec.domain.ioThreadsPolicy. Nothing is allocated
// unless a policy is set or a disk asks for a dedicated thread. Disks with
// dedicatedIOThread get a thread each; the other virtio disks share one
// thread (shared, or no policy), a pool of up to two threads per vCPU (auto),
// or the supplemental pool (supplementalPool), assigned round robin.
func planIOThreads(spec *kubevirtv1.DomainSpec, vcpus uint32, p *field.Path) (ioThreadPlan, field.ErrorList) {
	plan := ioThreadPlan{disks: map[string]uint{}}
	var shared, dedicated []string
	for _, d := range spec.Devices.Disks {
		if !isVirtioDisk(&d) {
			continue
		}
		if d.DedicatedIOThread != nil && *d.DedicatedIOThread {
			dedicated = append(dedicated, d.Name)
		} else {
			shared = append(shared, d.Name)
		}
	}
	if spec.IOThreadsPolicy == nil && len(dedicated) == 0 {
		return plan, nil
	}
	pool := uint(0)
	if len(shared) > 0 {
		pool = 1
		if spec.IOThreadsPolicy != nil {
			switch *spec.IOThreadsPolicy {
			case kubevirtv1.IOThreadsPolicyShared:
			case kubevirtv1.IOThreadsPolicyAuto:
				pool = min(uint(2*vcpus), uint(len(shared)))
			case kubevirtv1.IOThreadsPolicySupplementalPool:
				if spec.IOThreads == nil || spec.IOThreads.SupplementalPoolThreadCount == nil || *spec.IOThreads.SupplementalPoolThreadCount < 1 {
					return plan, field.ErrorList{field.Required(p.Child("ioThreads", "supplementalPoolThreadCount"), "the supplemental pool needs a thread count above 0")}
				}
				pool = uint(*spec.IOThreads.SupplementalPoolThreadCount)
			default:
				return plan, field.ErrorList{field.NotSupported(p.Child("ioThreadsPolicy"), *spec.IOThreadsPolicy, []string{"shared", "auto", "supplementalPool"})}
			}
		}
		pool = max(pool, 1)
	}
	for i, name := range shared {
		plan.disks[name] = uint(i)%pool + 1
	}
	for i, name := range dedicated {
		plan.disks[name] = pool + uint(i) + 1
	}
	plan.count = pool + uint(len(dedicated))
	return plan, nil
}

// isVirtioDisk reports whether d is a disk (not a CD-ROM or LUN) on virtio,
// the only disks that take an I/O thread.
func isVirtioDisk(d *kubevirtv1.Disk) bool {
	if d.CDRom != nil || d.LUN != nil {
		return false
	}
	return d.Disk == nil || d.Disk.Bus == "" || d.Disk.Bus == kubevirtv1.DiskBusVirtio
}
