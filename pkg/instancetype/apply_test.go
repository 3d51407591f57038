package instancetype

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// expanded is what Apply made of a template.
type expanded struct {
	meta metav1.ObjectMeta
	spec kubevirtv1.VirtualMachineInstanceSpec
	errs field.ErrorList
}

// expand applies copies of the specs to a copy of the template, leaving the arguments untouched.
func expand(it *v1beta1.VirtualMachineInstancetypeSpec, pref *v1beta1.VirtualMachinePreferenceSpec,
	meta metav1.ObjectMeta, spec kubevirtv1.VirtualMachineInstanceSpec) expanded {
	out := expanded{meta: *meta.DeepCopy(), spec: *spec.DeepCopy()}
	out.errs = Apply(templatePath, it.DeepCopy(), pref.DeepCopy(), &out.meta, &out.spec)
	return out
}

// fullPreference sets every preference NativeVirt's instance can hold.
func fullPreference() *v1beta1.VirtualMachinePreferenceSpec {
	on := kubevirtv1.FeatureState{Enabled: new(true)}
	return &v1beta1.VirtualMachinePreferenceSpec{
		Clock: &v1beta1.ClockPreferences{
			PreferredClockOffset: &kubevirtv1.ClockOffset{UTC: &kubevirtv1.ClockOffsetUTC{}},
			PreferredTimer:       &kubevirtv1.Timer{RTC: &kubevirtv1.RTCTimer{TickPolicy: kubevirtv1.RTCTickPolicyCatchup}},
		},
		CPU: &v1beta1.CPUPreferences{
			PreferredCPUTopology: new(v1beta1.Cores),
			PreferredCPUFeatures: []kubevirtv1.CPUFeature{{Name: "vmx"}},
		},
		Devices: &v1beta1.DevicePreferences{
			PreferredAutoattachGraphicsDevice:   new(false),
			PreferredAutoattachMemBalloon:       new(false),
			PreferredAutoattachPodInterface:     new(false),
			PreferredAutoattachSerialConsole:    new(false),
			PreferredAutoattachInputDevice:      new(true),
			PreferredDisableHotplug:             new(true),
			PreferredSoundModel:                 "ac97",
			PreferredUseVirtioTransitional:      new(true),
			PreferredInputBus:                   kubevirtv1.InputBusVirtio,
			PreferredInputType:                  kubevirtv1.InputTypeKeyboard,
			PreferredDiskBus:                    kubevirtv1.DiskBusSATA,
			PreferredLunBus:                     kubevirtv1.DiskBusSATA,
			PreferredCdromBus:                   kubevirtv1.DiskBusSCSI,
			PreferredDiskDedicatedIoThread:      new(true),
			PreferredDiskCache:                  kubevirtv1.CacheWriteBack,
			PreferredDiskIO:                     kubevirtv1.IONative,
			PreferredDiskBlockSize:              &kubevirtv1.BlockSize{MatchVolume: &on},
			PreferredInterfaceModel:             "e1000e",
			PreferredRng:                        &kubevirtv1.Rng{},
			PreferredBlockMultiQueue:            new(true),
			PreferredNetworkInterfaceMultiQueue: new(true),
			PreferredTPM:                        &kubevirtv1.TPMDevice{},
			PreferredInterfaceMasquerade:        &kubevirtv1.InterfaceMasquerade{},
			PreferredPanicDeviceModel:           new(kubevirtv1.Pvpanic),
		},
		Features: &v1beta1.FeaturePreferences{
			PreferredAcpi: &on, PreferredApic: &kubevirtv1.FeatureAPIC{}, PreferredHyperv: &kubevirtv1.FeatureHyperv{Relaxed: &on},
			PreferredKvm: &kubevirtv1.FeatureKVM{}, PreferredPvspinlock: &on, PreferredSmm: &on,
		},
		Firmware:                               &v1beta1.FirmwarePreferences{PreferredEfi: &kubevirtv1.EFI{SecureBoot: new(true)}},
		Machine:                                &v1beta1.MachinePreferences{PreferredMachineType: "pc-q35-9.0"},
		PreferredSubdomain:                     new("vms"),
		PreferredTerminationGracePeriodSeconds: new(int64(60)),
		PreferredArchitecture:                  new("amd64"),
		Annotations:                            map[string]string{"pref": "1"},
	}
}

// fullTemplate sets every field fullPreference prefers, to other values.
func fullTemplate() kubevirtv1.VirtualMachineInstanceSpec {
	off := kubevirtv1.FeatureState{Enabled: new(false)}
	return kubevirtv1.VirtualMachineInstanceSpec{
		Subdomain:                     "mine",
		TerminationGracePeriodSeconds: new(int64(0)),
		Architecture:                  "amd64",
		Networks:                      []kubevirtv1.Network{{Name: "default", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}}},
		Domain: kubevirtv1.DomainSpec{
			CPU:      &kubevirtv1.CPU{Sockets: 2, Features: []kubevirtv1.CPUFeature{{Name: "vmx", Policy: "disable"}}},
			Machine:  &kubevirtv1.Machine{Type: "q35"},
			Clock:    &kubevirtv1.Clock{ClockOffset: kubevirtv1.ClockOffset{Timezone: new(kubevirtv1.ClockOffsetTimezone("UTC"))}, Timer: &kubevirtv1.Timer{}},
			Firmware: &kubevirtv1.Firmware{Bootloader: &kubevirtv1.Bootloader{BIOS: &kubevirtv1.BIOS{}}},
			Features: &kubevirtv1.Features{
				ACPI: off, APIC: &kubevirtv1.FeatureAPIC{Enabled: new(false)}, Hyperv: &kubevirtv1.FeatureHyperv{Relaxed: &off},
				KVM: &kubevirtv1.FeatureKVM{Hidden: true}, Pvspinlock: &off, SMM: &off,
			},
			Devices: kubevirtv1.Devices{
				AutoattachGraphicsDevice: new(true), AutoattachMemBalloon: new(true), AutoattachPodInterface: new(true),
				AutoattachSerialConsole: new(true), AutoattachInputDevice: new(false), DisableHotplug: true,
				UseVirtioTransitional: new(false), BlockMultiQueue: new(false), NetworkInterfaceMultiQueue: new(false),
				Rng: &kubevirtv1.Rng{}, TPM: &kubevirtv1.TPMDevice{Enabled: new(false)},
				Sound:        &kubevirtv1.SoundDevice{Name: "s", Model: "ich9"},
				Inputs:       []kubevirtv1.Input{{Name: "i", Bus: kubevirtv1.InputBusUSB, Type: kubevirtv1.InputTypeTablet}},
				PanicDevices: []kubevirtv1.PanicDevice{{Model: new(kubevirtv1.Isa)}},
				Disks: []kubevirtv1.Disk{
					{
						Name: "d", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}},
						Cache: kubevirtv1.CacheNone, IO: kubevirtv1.IOThreads, DedicatedIOThread: new(false),
						BlockSize: &kubevirtv1.BlockSize{Custom: &kubevirtv1.CustomBlockSize{Logical: 512, Physical: 512}},
					},
					{Name: "c", DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{Bus: kubevirtv1.DiskBusSATA}}},
					{Name: "l", DiskDevice: kubevirtv1.DiskDevice{LUN: &kubevirtv1.LunTarget{Bus: kubevirtv1.DiskBusSCSI}}},
				},
				Interfaces: []kubevirtv1.Interface{{
					Name: "default", Model: "virtio",
					InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}},
				}},
			},
		},
	}
}

func TestApplyNothing(t *testing.T) {
	spec := fullTemplate()
	meta := metav1.ObjectMeta{Name: "vm", Annotations: map[string]string{"a": "b"}}
	got := expand(nil, nil, meta, spec)
	wantNoErrs(t, got.errs)
	wantSpec(t, got.spec, spec)
	if diff := cmp.Diff(meta, got.meta); diff != "" {
		t.Errorf("metadata changed (-want +got):\n%s", diff)
	}
	// Nothing to apply needs no metadata or spec.
	wantNoErrs(t, Apply(templatePath, nil, nil, nil, nil))
}

func TestApplyWithoutMetadataOrSpec(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta *metav1.ObjectMeta
		spec *kubevirtv1.VirtualMachineInstanceSpec
	}{
		{"no metadata", nil, &kubevirtv1.VirtualMachineInstanceSpec{}},
		{"no spec", &metav1.ObjectMeta{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := Apply(templatePath, instancetypeSpec(1, "1Gi"), nil, tc.meta, tc.spec)
			if len(errs) != 1 || errs[0].Type != field.ErrorTypeInternal || errs[0].Field != "spec.template" {
				t.Errorf("errors %v, want one internal error at spec.template", errs)
			}
		})
	}
}

// TestPreferenceNeverOverrides applies every preference to a template that sets every field.
func TestPreferenceNeverOverrides(t *testing.T) {
	spec := fullTemplate()
	meta := metav1.ObjectMeta{Annotations: map[string]string{"pref": "mine"}}
	got := expand(nil, fullPreference(), meta, spec)
	wantNoErrs(t, got.errs)
	wantSpec(t, got.spec, spec)
	if diff := cmp.Diff(meta, got.meta); diff != "" {
		t.Errorf("metadata changed (-want +got):\n%s", diff)
	}
}

func TestApplyPreferenceOnly(t *testing.T) {
	spec := kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{
		Resources: kubevirtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		CPU:       &kubevirtv1.CPU{Cores: 2},
		Devices:   kubevirtv1.Devices{Disks: []kubevirtv1.Disk{{Name: "root"}}},
	}}
	pref := &v1beta1.VirtualMachinePreferenceSpec{
		CPU:         &v1beta1.CPUPreferences{PreferredCPUTopology: new(v1beta1.Cores)},
		Devices:     &v1beta1.DevicePreferences{PreferredDiskBus: kubevirtv1.DiskBusSATA},
		Machine:     &v1beta1.MachinePreferences{PreferredMachineType: "q35"},
		Annotations: map[string]string{"p": "1"},
		Requirements: &v1beta1.PreferenceRequirements{
			CPU:    &v1beta1.CPUPreferenceRequirement{Guest: 2},
			Memory: &v1beta1.MemoryPreferenceRequirement{Guest: resource.MustParse("1Gi")},
		},
	}
	got := expand(nil, pref, metav1.ObjectMeta{}, spec)
	wantNoErrs(t, got.errs)
	want := *spec.DeepCopy()
	want.Domain.Machine = &kubevirtv1.Machine{Type: "q35"}
	want.Domain.Devices.Disks[0].Disk = &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusSATA}
	wantSpec(t, got.spec, want)
	if diff := cmp.Diff(map[string]string{"p": "1"}, got.meta.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

func TestApplyBoth(t *testing.T) {
	it := instancetypeSpec(4, "2Gi")
	it.Annotations = map[string]string{"it": "1"}
	got := expand(it, fullPreference(), metav1.ObjectMeta{}, kubevirtv1.VirtualMachineInstanceSpec{
		Domain: kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{{Name: "root"}}}},
	})
	wantNoErrs(t, got.errs)
	c := got.spec.Domain.CPU
	if c.Sockets != 1 || c.Cores != 4 || c.Threads != 1 || len(c.Features) != 1 || c.Features[0].Name != "vmx" {
		t.Errorf("CPU %+v, want 1 socket of 4 cores with the preferred feature", c)
	}
	if got.spec.Domain.Memory.Guest.String() != "2Gi" || got.spec.Domain.Machine.Type != "pc-q35-9.0" || got.spec.Subdomain != "vms" {
		t.Errorf("spec %+v lacks the instance type's memory or the preference's defaults", got.spec)
	}
	if diff := cmp.Diff(map[string]string{"it": "1", "pref": "1"}, got.meta.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

func TestApplyConflictsStopBeforePreference(t *testing.T) {
	pref := &v1beta1.VirtualMachinePreferenceSpec{
		Machine:      &v1beta1.MachinePreferences{PreferredMachineType: "q35"},
		Requirements: &v1beta1.PreferenceRequirements{CPU: &v1beta1.CPUPreferenceRequirement{Guest: 8}},
	}
	got := expand(instancetypeSpec(2, "1Gi"), pref, metav1.ObjectMeta{},
		kubevirtv1.VirtualMachineInstanceSpec{SchedulerName: "x", Domain: kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Threads: 2}}})
	// The conflict alone: the requirement (8 vCPUs) is not checked, the preference not applied.
	wantErrs(t, got.errs, conflictErr("spec.template.spec.domain.cpu.threads"))
	if got.spec.Domain.Machine != nil {
		t.Errorf("the preference was applied despite the conflict: %+v", got.spec.Domain.Machine)
	}
}

func TestApplyChecksRequirementsLast(t *testing.T) {
	pref := &v1beta1.VirtualMachinePreferenceSpec{
		PreferredArchitecture: new("arm64"),
		Requirements: &v1beta1.PreferenceRequirements{
			CPU:          &v1beta1.CPUPreferenceRequirement{Guest: 4},
			Architecture: new("arm64"),
		},
	}
	got := expand(instancetypeSpec(2, "1Gi"), pref, metav1.ObjectMeta{}, kubevirtv1.VirtualMachineInstanceSpec{})
	// The preferred architecture is applied before the architecture requirement is checked.
	wantErrs(t, got.errs, unmetErr("spec.instancetype", "insufficient CPU resources of 2 vCPU provided by instance type, preference requires 4 vCPU"))
	if got.spec.Architecture != "arm64" || got.spec.Domain.CPU.Sockets != 2 {
		t.Errorf("spec not expanded before the requirements: %+v", got.spec)
	}
}

func TestApplyDefaultPath(t *testing.T) {
	spec := kubevirtv1.VirtualMachineInstanceSpec{SchedulerName: "x"}
	it := instancetypeSpec(1, "1Gi")
	it.SchedulerName = "y"
	wantErrs(t, Apply(nil, it, nil, &metav1.ObjectMeta{}, &spec), conflictErr("spec.template.spec.schedulerName"))
}

// TestApplyDeterministic applies the same specs twice; maps must not make results differ.
func TestApplyDeterministic(t *testing.T) {
	it := fullInstancetype()
	it.Annotations = map[string]string{}
	metaAnnotations := map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		it.Annotations[k] = "it"
		metaAnnotations[k] = "template"
	}
	for _, tc := range []struct {
		name string
		spec kubevirtv1.VirtualMachineInstanceSpec
		meta metav1.ObjectMeta
	}{
		{"expansion", kubevirtv1.VirtualMachineInstanceSpec{}, metav1.ObjectMeta{}},
		{"conflicts", fullTemplate(), metav1.ObjectMeta{Annotations: metaAnnotations}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := expand(it, fullPreference(), tc.meta, tc.spec)
			for range 20 {
				again := expand(it, fullPreference(), tc.meta, tc.spec)
				if diff := cmp.Diff(first.errs, again.errs); diff != "" {
					t.Fatalf("errors differ between runs (-first +again):\n%s", diff)
				}
				wantSpec(t, again.spec, first.spec)
				if diff := cmp.Diff(first.meta, again.meta); diff != "" {
					t.Fatalf("metadata differs between runs (-first +again):\n%s", diff)
				}
			}
		})
	}
}

// TestApplyPreferenceDoesNotAlias changes everything the preference put into the spec and checks
// that the preference did not change with it.
func TestApplyPreferenceDoesNotAlias(t *testing.T) {
	pref := fullPreference()
	before := pref.DeepCopy()
	spec := kubevirtv1.VirtualMachineInstanceSpec{
		Networks: []kubevirtv1.Network{{Name: "default", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}}},
		Domain: kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{
			Disks:        []kubevirtv1.Disk{{Name: "d", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}}},
			Interfaces:   []kubevirtv1.Interface{{Name: "default"}},
			PanicDevices: []kubevirtv1.PanicDevice{{}},
		}},
	}
	meta := metav1.ObjectMeta{}
	wantNoErrs(t, Apply(templatePath, nil, pref, &meta, &spec))
	d := &spec.Domain
	*d.Clock.UTC = kubevirtv1.ClockOffsetUTC{OffsetSeconds: new(int32(1))}
	d.Clock.Timer.RTC.TickPolicy = "changed"
	d.CPU.Features[0].Name = "changed"
	*d.Devices.AutoattachInputDevice = false
	d.Devices.Disks[0].BlockSize.MatchVolume.Enabled = new(false)
	*d.Devices.Disks[0].DedicatedIOThread = false
	*d.Devices.PanicDevices[0].Model = "changed"
	d.Devices.TPM.Persistent = new(true)
	*d.Features.ACPI.Enabled = false
	d.Features.Hyperv.Relaxed.Enabled = new(false)
	*d.Firmware.Bootloader.EFI.SecureBoot = false
	*spec.TerminationGracePeriodSeconds = 1
	meta.Annotations["pref"] = "changed"
	if diff := cmp.Diff(before, pref, diffOpts...); diff != "" {
		t.Errorf("the preference changed (-before +after):\n%s", diff)
	}
}
