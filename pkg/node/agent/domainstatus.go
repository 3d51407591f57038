package agent

import (
	"context"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// domain is what KubeVirt reports of the running domain: the machine type, the CPU
// topology, the memory, the disks' guest devices, how a migration would move the guest, and the
// launcher's user and SELinux context (the launcher runs QEMU as root, without SELinux labels).
func (g *guestInfo) domain(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, l *launcher, st *kubevirtv1.VirtualMachineInstanceStatus) {
	d := l.details.Load()
	if d == nil {
		fresh, err := l.conn.Details(l.domain)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Domain details unknown", "domain", l.domain, "err", err)
			return
		}
		d = &fresh
		l.details.Store(d)
	}
	if d.Machine != "" {
		st.Machine = &kubevirtv1.Machine{Type: d.Machine}
	}
	st.CurrentCPUTopology = &kubevirtv1.CPUTopology{Sockets: d.Sockets, Cores: d.Cores, Threads: d.Threads}
	if boot, err := launcherpod.GuestMemory(&vmi.Spec); err == nil {
		requested := boot.DeepCopy()
		st.Memory = &kubevirtv1.MemoryStatus{GuestAtBoot: &boot, GuestRequested: &requested}
		if d.CurrentMemory > 0 {
			st.Memory.GuestCurrent = resource.NewQuantity(d.CurrentMemory, resource.BinarySI)
		}
	}
	st.VolumeStatus = volumeStatus(vmi, st.VolumeStatus, d.DiskTargets)
	st.MigrationMethod = migrationMethod(vmi, l.sharedVolumes)
	st.MigrationTransport = kubevirtv1.MigrationTransportUnix
	st.RuntimeUser = 0
	st.SelinuxContext = "none"
}

// volumeStatus lists the VMI's volumes with their guest devices, keeping what else an entry
// says.
func volumeStatus(vmi *kubevirtv1.VirtualMachineInstance, old []kubevirtv1.VolumeStatus, targets map[string]string) []kubevirtv1.VolumeStatus {
	byName := map[string]kubevirtv1.VolumeStatus{}
	for _, v := range old {
		byName[v.Name] = v
	}
	var out []kubevirtv1.VolumeStatus
	for _, v := range vmi.Spec.Volumes {
		s := byName[v.Name]
		s.Name, s.Target = v.Name, targets[v.Name]
		if v.PersistentVolumeClaim != nil && s.PersistentVolumeClaimInfo == nil {
			s.PersistentVolumeClaimInfo = &kubevirtv1.PersistentVolumeClaimInfo{ClaimName: v.PersistentVolumeClaim.ClaimName}
		}
		if v.DataVolume != nil && s.PersistentVolumeClaimInfo == nil {
			s.PersistentVolumeClaimInfo = &kubevirtv1.PersistentVolumeClaimInfo{ClaimName: v.DataVolume.Name}
		}
		out = append(out, s)
	}
	return out
}

// migrationMethod is BlockMigration when a migration copies disks (containerDisk overlays,
// empty disks, claims that are not ReadWriteMany), LiveMigration when it moves memory only.
func migrationMethod(vmi *kubevirtv1.VirtualMachineInstance, shared map[string]bool) kubevirtv1.VirtualMachineInstanceMigrationMethod {
	for _, v := range vmi.Spec.Volumes {
		switch {
		case v.ContainerDisk != nil, v.EmptyDisk != nil, v.Ephemeral != nil, v.HostDisk != nil:
			return kubevirtv1.BlockMigration
		case (v.PersistentVolumeClaim != nil || v.DataVolume != nil) && !shared[v.Name]:
			return kubevirtv1.BlockMigration
		}
	}
	return kubevirtv1.LiveMigration
}
