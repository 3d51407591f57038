package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

func TestSetObjectDefaultsVirtualMachineInstance(t *testing.T) {
	masquerade := InterfaceBindingMethod{Masquerade: &InterfaceMasquerade{}}
	podNetwork := Network{Name: "default", NetworkSource: NetworkSource{Pod: &PodNetwork{}}}
	q35 := &Machine{Type: "q35"}
	tests := []struct {
		name string
		in   VirtualMachineInstanceSpec
		want VirtualMachineInstanceSpec
	}{
		{
			name: "empty spec gets machine type and pod network",
			in:   VirtualMachineInstanceSpec{},
			want: VirtualMachineInstanceSpec{
				Domain: DomainSpec{
					Machine: q35,
					Devices: Devices{Interfaces: []Interface{{Name: "default", InterfaceBindingMethod: masquerade}}},
				},
				Networks: []Network{podNetwork},
			},
		},
		{
			name: "explicit machine type is kept",
			in:   VirtualMachineInstanceSpec{Domain: DomainSpec{Machine: &Machine{Type: "pc-q35-rhel9.4.0"}, Devices: Devices{AutoattachPodInterface: ptr.To(false)}}},
			want: VirtualMachineInstanceSpec{Domain: DomainSpec{Machine: &Machine{Type: "pc-q35-rhel9.4.0"}, Devices: Devices{AutoattachPodInterface: ptr.To(false)}}},
		},
		{
			name: "empty machine type is defaulted",
			in:   VirtualMachineInstanceSpec{Domain: DomainSpec{Machine: &Machine{}, Devices: Devices{AutoattachPodInterface: ptr.To(false)}}},
			want: VirtualMachineInstanceSpec{Domain: DomainSpec{Machine: q35, Devices: Devices{AutoattachPodInterface: ptr.To(false)}}},
		},
		{
			name: "autoattachPodInterface true still gets the pod network",
			in:   VirtualMachineInstanceSpec{Domain: DomainSpec{Devices: Devices{AutoattachPodInterface: ptr.To(true)}}},
			want: VirtualMachineInstanceSpec{
				Domain: DomainSpec{Machine: q35, Devices: Devices{
					AutoattachPodInterface: ptr.To(true),
					Interfaces:             []Interface{{Name: "default", InterfaceBindingMethod: masquerade}},
				}},
				Networks: []Network{podNetwork},
			},
		},
		{
			name: "a volume without a disk gets a virtio disk; hotplugged volumes do not",
			in: VirtualMachineInstanceSpec{
				Domain: DomainSpec{Devices: Devices{AutoattachPodInterface: ptr.To(false), Disks: []Disk{{Name: "root"}}}},
				Volumes: []Volume{
					{Name: "root", VolumeSource: VolumeSource{EmptyDisk: &EmptyDiskSource{}}},
					{Name: "data", VolumeSource: VolumeSource{EmptyDisk: &EmptyDiskSource{}}},
					{Name: "hot", VolumeSource: VolumeSource{PersistentVolumeClaim: &PersistentVolumeClaimVolumeSource{Hotpluggable: true}}},
				},
			},
			want: VirtualMachineInstanceSpec{
				Domain: DomainSpec{Machine: q35, Devices: Devices{AutoattachPodInterface: ptr.To(false), Disks: []Disk{
					{Name: "root", DiskDevice: DiskDevice{Disk: &DiskTarget{Bus: "virtio"}}},
					{Name: "data", DiskDevice: DiskDevice{Disk: &DiskTarget{Bus: "virtio"}}},
				}}},
				Volumes: []Volume{
					{Name: "root", VolumeSource: VolumeSource{EmptyDisk: &EmptyDiskSource{}}},
					{Name: "data", VolumeSource: VolumeSource{EmptyDisk: &EmptyDiskSource{}}},
					{Name: "hot", VolumeSource: VolumeSource{PersistentVolumeClaim: &PersistentVolumeClaimVolumeSource{Hotpluggable: true}}},
				},
			},
		},
		{
			name: "the secret of an ACPI table gets no disk",
			in: VirtualMachineInstanceSpec{
				Domain:  DomainSpec{Firmware: &Firmware{ACPI: &ACPI{SlicNameRef: "slic"}}, Devices: Devices{AutoattachPodInterface: ptr.To(false)}},
				Volumes: []Volume{{Name: "slic", VolumeSource: VolumeSource{Secret: &SecretVolumeSource{SecretName: "s"}}}},
			},
			want: VirtualMachineInstanceSpec{
				Domain: DomainSpec{Machine: q35, Firmware: &Firmware{ACPI: &ACPI{SlicNameRef: "slic"}},
					Devices: Devices{AutoattachPodInterface: ptr.To(false)}},
				Volumes: []Volume{{Name: "slic", VolumeSource: VolumeSource{Secret: &SecretVolumeSource{SecretName: "s"}}}},
			},
		},
		{
			name: "networks without interfaces are left alone",
			in:   VirtualMachineInstanceSpec{Networks: []Network{{Name: "blue", NetworkSource: NetworkSource{Multus: &MultusNetwork{NetworkName: "blue"}}}}},
			want: VirtualMachineInstanceSpec{
				Domain:   DomainSpec{Machine: q35},
				Networks: []Network{{Name: "blue", NetworkSource: NetworkSource{Multus: &MultusNetwork{NetworkName: "blue"}}}},
			},
		},
		{
			name: "interfaces: missing binding becomes masquerade, explicit binding and plugin are kept",
			in: VirtualMachineInstanceSpec{
				Domain: DomainSpec{Devices: Devices{Interfaces: []Interface{
					{Name: "a"},
					{Name: "b", InterfaceBindingMethod: InterfaceBindingMethod{Bridge: &InterfaceBridge{}}},
					{Name: "c", Binding: &PluginBinding{Name: "passt"}},
				}}},
				Networks: []Network{podNetwork},
			},
			want: VirtualMachineInstanceSpec{
				Domain: DomainSpec{Machine: q35, Devices: Devices{Interfaces: []Interface{
					{Name: "a", InterfaceBindingMethod: masquerade},
					{Name: "b", InterfaceBindingMethod: InterfaceBindingMethod{Bridge: &InterfaceBridge{}}},
					{Name: "c", Binding: &PluginBinding{Name: "passt"}},
				}}},
				Networks: []Network{podNetwork},
			},
		},
		{
			name: "disks: device type and bus",
			in: VirtualMachineInstanceSpec{Domain: DomainSpec{Devices: Devices{
				AutoattachPodInterface: ptr.To(false),
				Disks: []Disk{
					{Name: "none"},
					{Name: "disk", DiskDevice: DiskDevice{Disk: &DiskTarget{}}},
					{Name: "sata", DiskDevice: DiskDevice{Disk: &DiskTarget{Bus: DiskBusSATA}}},
					{Name: "cd", DiskDevice: DiskDevice{CDRom: &CDRomTarget{}}},
					{Name: "cd-open", DiskDevice: DiskDevice{CDRom: &CDRomTarget{Bus: DiskBusSCSI, ReadOnly: ptr.To(false), Tray: TrayStateOpen}}},
					{Name: "lun", DiskDevice: DiskDevice{LUN: &LunTarget{}}},
				},
			}}},
			want: VirtualMachineInstanceSpec{Domain: DomainSpec{Machine: q35, Devices: Devices{
				AutoattachPodInterface: ptr.To(false),
				Disks: []Disk{
					{Name: "none", DiskDevice: DiskDevice{Disk: &DiskTarget{Bus: DiskBusVirtio}}},
					{Name: "disk", DiskDevice: DiskDevice{Disk: &DiskTarget{Bus: DiskBusVirtio}}},
					{Name: "sata", DiskDevice: DiskDevice{Disk: &DiskTarget{Bus: DiskBusSATA}}},
					{Name: "cd", DiskDevice: DiskDevice{CDRom: &CDRomTarget{Bus: DiskBusSATA, ReadOnly: ptr.To(true), Tray: TrayStateClosed}}},
					{Name: "cd-open", DiskDevice: DiskDevice{CDRom: &CDRomTarget{Bus: DiskBusSCSI, ReadOnly: ptr.To(false), Tray: TrayStateOpen}}},
					{Name: "lun", DiskDevice: DiskDevice{LUN: &LunTarget{Bus: DiskBusSCSI}}},
				},
			}}},
		},
		{
			name: "cpu topology stays unset, inputs and probes are filled",
			in: VirtualMachineInstanceSpec{
				Domain: DomainSpec{CPU: &CPU{Model: "host-model"}, Devices: Devices{
					AutoattachPodInterface: ptr.To(false),
					Inputs:                 []Input{{Name: "tablet"}},
				}},
				ReadinessProbe: &Probe{Handler: Handler{GuestAgentPing: &GuestAgentPing{}}, PeriodSeconds: 5},
			},
			want: VirtualMachineInstanceSpec{
				Domain: DomainSpec{Machine: q35, CPU: &CPU{Model: "host-model"}, Devices: Devices{
					AutoattachPodInterface: ptr.To(false),
					Inputs:                 []Input{{Name: "tablet", Bus: InputBusUSB, Type: InputTypeTablet}},
				}},
				ReadinessProbe: &Probe{
					Handler:       Handler{GuestAgentPing: &GuestAgentPing{}},
					PeriodSeconds: 5, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
				},
			},
		},
		{
			name: "firmware UUID is not defaulted",
			in:   VirtualMachineInstanceSpec{Domain: DomainSpec{Firmware: &Firmware{}, Devices: Devices{AutoattachPodInterface: ptr.To(false)}}},
			want: VirtualMachineInstanceSpec{Domain: DomainSpec{Machine: q35, Firmware: &Firmware{}, Devices: Devices{AutoattachPodInterface: ptr.To(false)}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := &VirtualMachineInstance{Spec: *tt.in.DeepCopy()}
			SetObjectDefaults_VirtualMachineInstance(vmi)
			if diff := cmp.Diff(tt.want, vmi.Spec); diff != "" {
				t.Errorf("defaulted spec (-want +got):\n%s", diff)
			}
			// Defaulting must be idempotent: it runs on every decode.
			again := vmi.DeepCopy()
			SetObjectDefaults_VirtualMachineInstance(again)
			if diff := cmp.Diff(vmi, again); diff != "" {
				t.Errorf("second defaulting changed the object (-first +second):\n%s", diff)
			}
		})
	}
}

// TestTemplatesAreDefaulted checks that the instance templates of
// VirtualMachines and replica sets get the same defaults as instances.
func TestTemplatesAreDefaulted(t *testing.T) {
	template := func() *VirtualMachineInstanceTemplateSpec {
		return &VirtualMachineInstanceTemplateSpec{Spec: VirtualMachineInstanceSpec{
			Domain: DomainSpec{Devices: Devices{Disks: []Disk{{Name: "root"}}}},
		}}
	}
	check := func(t *testing.T, spec VirtualMachineInstanceSpec) {
		t.Helper()
		if spec.Domain.Machine == nil || spec.Domain.Machine.Type != DefaultMachineType {
			t.Errorf("machine = %+v, want %q", spec.Domain.Machine, DefaultMachineType)
		}
		if d := spec.Domain.Devices.Disks[0].Disk; d == nil || d.Bus != DiskBusVirtio {
			t.Errorf("disk = %+v, want a virtio disk", d)
		}
		if len(spec.Networks) != 1 || len(spec.Domain.Devices.Interfaces) != 1 {
			t.Errorf("networks %d, interfaces %d, want 1 each", len(spec.Networks), len(spec.Domain.Devices.Interfaces))
		}
	}
	t.Run("VirtualMachine", func(t *testing.T) {
		vm := &VirtualMachine{Spec: VirtualMachineSpec{Template: template()}}
		SetObjectDefaults_VirtualMachine(vm)
		check(t, vm.Spec.Template.Spec)
	})
	t.Run("VirtualMachineInstanceReplicaSet", func(t *testing.T) {
		rs := &VirtualMachineInstanceReplicaSet{Spec: VirtualMachineInstanceReplicaSetSpec{Template: template()}}
		SetObjectDefaults_VirtualMachineInstanceReplicaSet(rs)
		check(t, rs.Spec.Template.Spec)
	})
	t.Run("VirtualMachine with a preference", func(t *testing.T) {
		// The preference fills these when the instance is made; defaults here would pre-empt it.
		vm := &VirtualMachine{Spec: VirtualMachineSpec{Template: template(), Preference: &PreferenceMatcher{Name: "fedora"}}}
		SetObjectDefaults_VirtualMachine(vm)
		if diff := cmp.Diff(template(), vm.Spec.Template); diff != "" {
			t.Errorf("template of a VM with a preference was defaulted (-want +got):\n%s", diff)
		}
	})
	t.Run("VirtualMachine without template", func(t *testing.T) {
		vm := &VirtualMachine{}
		SetObjectDefaults_VirtualMachine(vm) // must not panic
		if vm.Spec.Template != nil {
			t.Errorf("template = %+v, want nil", vm.Spec.Template)
		}
	})
}
