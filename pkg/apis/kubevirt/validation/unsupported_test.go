package validation

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// vmiUses sets one unsupported feature on a valid instance, keyed by the documented path.
var vmiUses = map[string]func(vmi *kubevirtv1.VirtualMachineInstance){
	"spec.domain.devices.gpus": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.Devices.GPUs = []kubevirtv1.GPU{{Name: "gpu1", DeviceName: "nvidia.com/TU104GL"}}
	},
	"spec.domain.devices.hostDevices": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.Devices.HostDevices = []kubevirtv1.HostDevice{{Name: "dev1", DeviceName: "intel.com/qat"}}
	},
	"spec.domain.devices.filesystems": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.Devices.Filesystems = []kubevirtv1.Filesystem{{Name: "share", Virtiofs: &kubevirtv1.FilesystemVirtiofs{}}}
	},
	"spec.domain.devices.tpm.persistent": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.Devices.TPM = &kubevirtv1.TPMDevice{Persistent: ptr(true)}
	},
	"spec.domain.devices.clientPassthrough": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.Devices.ClientPassthrough = &kubevirtv1.ClientPassthroughDevices{}
	},
	"spec.domain.devices.downwardMetrics": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.Devices.DownwardMetrics = &kubevirtv1.DownwardMetrics{}
	},
	"spec.domain.cpu.dedicatedCpuPlacement": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.CPU = &kubevirtv1.CPU{DedicatedCPUPlacement: true}
	},
	"spec.domain.cpu.isolateEmulatorThread": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.CPU = &kubevirtv1.CPU{IsolateEmulatorThread: true}
	},
	"spec.domain.cpu.numa": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.CPU = &kubevirtv1.CPU{NUMA: &kubevirtv1.NUMA{GuestMappingPassthrough: &kubevirtv1.NUMAGuestMappingPassthrough{}}}
	},
	"spec.domain.cpu.realtime": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.CPU = &kubevirtv1.CPU{Realtime: &kubevirtv1.Realtime{Mask: "0-1"}}
	},
	"spec.domain.memory.hugepages": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.Memory = &kubevirtv1.Memory{Hugepages: &kubevirtv1.Hugepages{PageSize: "2Mi"}}
	},
	"spec.domain.firmware.bootloader.efi.persistent": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.Firmware = &kubevirtv1.Firmware{Bootloader: &kubevirtv1.Bootloader{
			EFI: &kubevirtv1.EFI{SecureBoot: ptr(false), Persistent: ptr(true)}}}
	},
	"spec.domain.launchSecurity": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.LaunchSecurity = &kubevirtv1.LaunchSecurity{SEV: &kubevirtv1.SEV{}}
	},
	"spec.resourceClaims": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu"}}
	},
	"spec.domain.devices.disks[*].lun": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.Devices.Disks[0].DiskDevice = kubevirtv1.DiskDevice{LUN: &kubevirtv1.LunTarget{}}
	},
	"spec.volumes[*].downwardMetrics": setVolume0(kubevirtv1.VolumeSource{DownwardMetrics: &kubevirtv1.DownwardMetricsVolumeSource{}}),
	"spec.volumes[*].hostDisk":        setVolume0(kubevirtv1.VolumeSource{HostDisk: &kubevirtv1.HostDisk{Path: "/a.img", Type: kubevirtv1.HostDiskExists}}),
	"spec.volumes[*].memoryDump": setVolume0(kubevirtv1.VolumeSource{MemoryDump: &kubevirtv1.MemoryDumpVolumeSource{
		PersistentVolumeClaimVolumeSource: kubevirtv1.PersistentVolumeClaimVolumeSource{
			PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "dump"}}}}),
	"spec.domain.devices.interfaces[*].sriov": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = kubevirtv1.InterfaceBindingMethod{SRIOV: &kubevirtv1.InterfaceSRIOV{}}
	},
	"metadata.annotations[hooks.kubevirt.io/hookSidecars]": func(v *kubevirtv1.VirtualMachineInstance) {
		v.Annotations = map[string]string{SidecarHooksAnnotation: `[{"args": ["--version", "v1alpha2"], "image": "hook:1"}]`}
	},
}

func setVolume0(src kubevirtv1.VolumeSource) func(v *kubevirtv1.VirtualMachineInstance) {
	return func(v *kubevirtv1.VirtualMachineInstance) { v.Spec.Volumes[0].VolumeSource = src }
}

// vmUses sets one unsupported VirtualMachine feature on a valid VirtualMachine.
var vmUses = map[string]func(vm *kubevirtv1.VirtualMachine){
	"spec.runStrategy": func(vm *kubevirtv1.VirtualMachine) {
		vm.Spec.RunStrategy = ptr(kubevirtv1.RunStrategyWaitAsReceiver)
	},
	"spec.updateVolumesStrategy": func(vm *kubevirtv1.VirtualMachine) {
		vm.Spec.UpdateVolumesStrategy = ptr(kubevirtv1.UpdateVolumesStrategyMigration)
	},
}

// vmimUses sets one unsupported migration feature on a valid migration.
var vmimUses = map[string]func(m *kubevirtv1.VirtualMachineInstanceMigration){
	"spec.sendTo": func(m *kubevirtv1.VirtualMachineInstanceMigration) {
		m.Spec.SendTo = &kubevirtv1.VirtualMachineInstanceMigrationSource{MigrationID: "m", ConnectURL: "https://x"}
	},
	"spec.receive": func(m *kubevirtv1.VirtualMachineInstanceMigration) {
		m.Spec.Receive = &kubevirtv1.VirtualMachineInstanceMigrationTarget{MigrationID: "m"}
	},
}

// refusal is the errors of one validation and the path of the Forbidden error expected.
type refusal struct {
	want string
	errs field.ErrorList
}

// TestEveryUnsupportedFieldIsRefused sets each documented unsupported field on an otherwise
// valid object and expects exactly one Forbidden error at that field. Instance fields are also
// tried in a VirtualMachine template, where they sit under spec.template.
func TestEveryUnsupportedFieldIsRefused(t *testing.T) {
	var documented, tested []string
	for _, u := range UnsupportedFields() {
		documented = append(documented, u.Kind+" "+u.Path)
		wantPath := strings.ReplaceAll(u.Path, "[*]", "[0]")
		var runs []refusal
		switch u.Kind {
		case "VirtualMachineInstance":
			set, ok := vmiUses[u.Path]
			if !ok {
				continue
			}
			vmi := validVMI()
			set(vmi)
			vm := validVM()
			vm.Spec.Template.ObjectMeta.Annotations = vmi.Annotations
			vm.Spec.Template.Spec = vmi.Spec
			inTemplate := "spec.template." + wantPath
			runs = append(runs, refusal{wantPath, ValidateVirtualMachineInstance(vmi)}, refusal{inTemplate, ValidateVirtualMachine(vm)})
		case "VirtualMachine":
			set, ok := vmUses[u.Path]
			if !ok {
				continue
			}
			vm := validVM()
			set(vm)
			runs = append(runs, refusal{wantPath, ValidateVirtualMachine(vm)})
		case "VirtualMachineInstanceMigration":
			set, ok := vmimUses[u.Path]
			if !ok {
				continue
			}
			m := validMigration()
			set(m)
			runs = append(runs, refusal{wantPath, ValidateVirtualMachineInstanceMigration(m)})
		}
		tested = append(tested, u.Kind+" "+u.Path)
		for _, run := range runs {
			t.Run(run.want, func(t *testing.T) {
				compareErrs(t, []string{"Forbidden:" + run.want}, run.errs)
				if len(run.errs) == 1 {
					msg := run.errs[0].Error()
					wantMsg := run.want + ": Forbidden: " + u.Feature + " is not supported by NativeVirt yet"
					if msg != wantMsg {
						t.Errorf("message = %q, want %q", msg, wantMsg)
					}
				}
			})
		}
	}
	sort.Strings(documented)
	sort.Strings(tested)
	if diff := cmp.Diff(documented, tested); diff != "" {
		t.Errorf("unsupported fields without a test case (-documented +tested):\n%s", diff)
	}
	if got, want := len(tested), len(vmiUses)+len(vmUses)+len(vmimUses); got != want {
		t.Errorf("%d test cases do not match a table entry (%d tested, %d cases)", want-got, got, want)
	}
}
