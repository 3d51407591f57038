package agent

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// TestDomainStatus: the running instance's status says what KubeVirt's does of the domain:
// the machine type libvirt settled on, the CPU topology, the memory at boot and now, each
// volume's guest device, and that a migration copies its empty disk (BlockMigration).
func TestDomainStatus(t *testing.T) {
	e := newEnv(t)
	e.agent.instances.buildDomain = func(vmi *kubevirtv1.VirtualMachineInstance, _ DomainFacts) (string, []byte, error) {
		name := convert.DomainName(vmi.Namespace, vmi.Name)
		return name, fmt.Appendf(nil, `<domain type="qemu"><name>%s</name>
			<metadata><nv:vmi xmlns:nv="urn:nv"><nv:uid>%s</nv:uid></nv:vmi></metadata>
			<currentMemory unit="KiB">131072</currentMemory><vcpu>2</vcpu>
			<os><type machine="pc-q35-7.2">hvm</type></os>
			<cpu><topology sockets="1" dies="1" cores="2" threads="1"/></cpu>
			<devices><disk><target dev="vda"/><alias name="ua-root"/></disk>
			<interface type="ethernet"><mac address="52:54:00:aa:bb:cc"/><alias name="ua-default"/></interface></devices></domain>`, name, vmi.UID), nil
	}
	vmi := scheduledVMI()
	guest := resource.MustParse("128Mi")
	vmi.Spec.Domain.Memory = &kubevirtv1.Memory{Guest: &guest}
	vmi.Spec.Volumes = []kubevirtv1.Volume{
		{Name: "root", VolumeSource: kubevirtv1.VolumeSource{EmptyDisk: &kubevirtv1.EmptyDiskSource{Capacity: resource.MustParse("64Mi")}}},
		{Name: "unused", VolumeSource: kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
			PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}}},
	}
	vmi.Spec.Domain.Devices.Disks = []kubevirtv1.Disk{{Name: "root"}}
	e.addVMI(vmi)
	e.addLauncher(true)
	e.sync()
	e.sync()
	st := e.getVMI().Status
	current := resource.MustParse("128Mi")
	want := kubevirtv1.VirtualMachineInstanceStatus{
		Machine:            &kubevirtv1.Machine{Type: "pc-q35-7.2"},
		CurrentCPUTopology: &kubevirtv1.CPUTopology{Sockets: 1, Cores: 2, Threads: 1},
		Memory:             &kubevirtv1.MemoryStatus{GuestAtBoot: &guest, GuestCurrent: &current, GuestRequested: &guest},
		VolumeStatus: []kubevirtv1.VolumeStatus{{Name: "root", Target: "vda"},
			{Name: "unused", PersistentVolumeClaimInfo: &kubevirtv1.PersistentVolumeClaimInfo{ClaimName: "claim"}}},
		MigrationMethod:    kubevirtv1.BlockMigration,
		MigrationTransport: kubevirtv1.MigrationTransportUnix,
		SelinuxContext:     "none",
	}
	got := kubevirtv1.VirtualMachineInstanceStatus{Machine: st.Machine, CurrentCPUTopology: st.CurrentCPUTopology, Memory: st.Memory,
		VolumeStatus: st.VolumeStatus, MigrationMethod: st.MigrationMethod, MigrationTransport: st.MigrationTransport, SelinuxContext: st.SelinuxContext}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	// The interface has the domain's MAC; once the guest agent names it, its guest name too.
	if ifs := st.Interfaces; len(ifs) != 1 || ifs[0].MAC != "52:54:00:aa:bb:cc" || ifs[0].InfoSource != "domain" || ifs[0].InterfaceName != "" {
		t.Errorf("interfaces %+v before the guest agent, want the domain's MAC, info source domain", ifs)
	}
	e.daemon.SetGuestInterfaces(domain, []virt.GuestInterface{{Name: "lo", MAC: "00:00:00:00:00:00"}, {Name: "eth0", MAC: "52:54:00:AA:BB:CC", IPs: []string{"10.0.2.2"}}})
	e.daemon.ConnectAgent(domain, demoOS)
	e.sync()
	if ifs := e.getVMI().Status.Interfaces; len(ifs) != 1 || ifs[0].InterfaceName != "eth0" || ifs[0].InfoSource != "domain, guest-agent" {
		t.Errorf("interfaces %+v with the guest agent, want eth0 from domain, guest-agent", ifs)
	}
}
