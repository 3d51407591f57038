package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// validPreferenceSpec sets every preference NativeVirt validates to an accepted value.
func validPreferenceSpec() v1beta1.VirtualMachinePreferenceSpec {
	return v1beta1.VirtualMachinePreferenceSpec{
		CPU: &v1beta1.CPUPreferences{
			PreferredCPUTopology: ptr(v1beta1.Spread),
			SpreadOptions:        &v1beta1.SpreadOptions{Across: ptr(v1beta1.SpreadAcrossSocketsCoresThreads), Ratio: ptr(int32(4))},
			PreferredCPUFeatures: []kubevirtv1.CPUFeature{{Name: "vmx", Policy: "require"}},
		},
		Devices: &v1beta1.DevicePreferences{
			PreferredDiskBus:          kubevirtv1.DiskBusVirtio,
			PreferredLunBus:           kubevirtv1.DiskBusSCSI,
			PreferredCdromBus:         kubevirtv1.DiskBusSATA,
			PreferredDiskCache:        kubevirtv1.CacheWriteBack,
			PreferredDiskIO:           kubevirtv1.IONative,
			PreferredInterfaceModel:   "virtio",
			PreferredInputBus:         kubevirtv1.InputBusVirtio,
			PreferredInputType:        kubevirtv1.InputTypeTablet,
			PreferredSoundModel:       "ich9",
			PreferredPanicDeviceModel: ptr(kubevirtv1.Pvpanic),
			PreferredTPM:              &kubevirtv1.TPMDevice{},
			PreferredRng:              &kubevirtv1.Rng{},
		},
		Firmware:                               &v1beta1.FirmwarePreferences{PreferredEfi: &kubevirtv1.EFI{SecureBoot: ptr(true)}},
		Features:                               &v1beta1.FeaturePreferences{PreferredSmm: &kubevirtv1.FeatureState{}},
		Machine:                                &v1beta1.MachinePreferences{PreferredMachineType: "pc-q35-rhel9.4.0"},
		PreferredSubdomain:                     ptr("vms"),
		PreferredTerminationGracePeriodSeconds: ptr(int64(3600)),
		Requirements: &v1beta1.PreferenceRequirements{
			CPU:    &v1beta1.CPUPreferenceRequirement{Guest: 2},
			Memory: &v1beta1.MemoryPreferenceRequirement{Guest: resource.MustParse("2Gi")},
		},
		Annotations: map[string]string{"vm.kubevirt.io/os": "linux"},
	}
}

func TestValidPreferencesAreAccepted(t *testing.T) {
	p := &v1beta1.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: "fedora", Namespace: "vms"}, Spec: validPreferenceSpec()}
	compareErrs(t, nil, ValidateVirtualMachinePreference(p))
	cp := &v1beta1.VirtualMachineClusterPreference{ObjectMeta: metav1.ObjectMeta{Name: "fedora"}, Spec: validPreferenceSpec()}
	compareErrs(t, nil, ValidateVirtualMachineClusterPreference(cp))
	empty := &v1beta1.VirtualMachineClusterPreference{ObjectMeta: metav1.ObjectMeta{Name: "empty"}}
	compareErrs(t, nil, ValidateVirtualMachineClusterPreference(empty))
}

// TestPreferenceRules breaks one rule at a time and expects exactly the errors named, for both
// kinds.
func TestPreferenceRules(t *testing.T) {
	type spec = v1beta1.VirtualMachinePreferenceSpec
	tests := []struct {
		name   string
		mutate func(s *spec)
		want   []string
	}{
		{"topology unknown", func(s *spec) { s.CPU.PreferredCPUTopology = ptr(v1beta1.PreferredCPUTopology("numa")) },
			[]string{"NotSupported:spec.cpu.preferredCPUTopology"}},
		{"deprecated topology accepted", func(s *spec) { s.CPU.PreferredCPUTopology = ptr(v1beta1.DeprecatedPreferCores) }, nil},
		{"spread across unknown", func(s *spec) { s.CPU.SpreadOptions.Across = ptr(v1beta1.SpreadAcross("Sockets")) },
			[]string{"NotSupported:spec.cpu.spreadOptions.across"}},
		{"spread ratio zero", func(s *spec) { s.CPU.SpreadOptions.Ratio = ptr(int32(0)) }, []string{"Invalid:spec.cpu.spreadOptions.ratio"}},
		{"spread ratio zero without spread topology", func(s *spec) {
			s.CPU.PreferredCPUTopology = ptr(v1beta1.Sockets)
			s.CPU.SpreadOptions.Ratio = ptr(int32(-1))
		}, []string{"Invalid:spec.cpu.spreadOptions.ratio"}},
		{"cores and threads need a ratio of 2", func(s *spec) { s.CPU.SpreadOptions.Across = ptr(v1beta1.SpreadAcrossCoresThreads) },
			[]string{"Invalid:spec.cpu.spreadOptions.ratio"}},
		{"cores and threads with the default ratio", func(s *spec) {
			s.CPU.SpreadOptions = &v1beta1.SpreadOptions{Across: ptr(v1beta1.SpreadAcrossCoresThreads)}
		}, nil},
		{"cores and threads with the deprecated ratio", func(s *spec) {
			s.CPU.SpreadOptions = &v1beta1.SpreadOptions{Across: ptr(v1beta1.SpreadAcrossCoresThreads)}
			s.PreferSpreadSocketToCoreRatio = 3
		}, []string{"Invalid:spec.cpu.spreadOptions.ratio"}},
		{"cores and threads with another topology", func(s *spec) {
			s.CPU.PreferredCPUTopology = ptr(v1beta1.Sockets)
			s.CPU.SpreadOptions.Across = ptr(v1beta1.SpreadAcrossCoresThreads)
		}, nil},
		{"deprecated ratio negative", func(s *spec) { s.PreferSpreadSocketToCoreRatio = -1 }, []string{"Invalid:spec.preferSpreadSocketToCoreRatio"}},
		{"CPU feature without a name", func(s *spec) { s.CPU.PreferredCPUFeatures[0].Name = "" },
			[]string{"Required:spec.cpu.preferredCPUFeatures[0].name"}},
		{"CPU feature policy unknown", func(s *spec) { s.CPU.PreferredCPUFeatures[0].Policy = "always" },
			[]string{"NotSupported:spec.cpu.preferredCPUFeatures[0].policy"}},
		{"disk bus unknown", func(s *spec) { s.Devices.PreferredDiskBus = "ide" }, []string{"NotSupported:spec.devices.preferredDiskBus"}},
		{"LUN bus unknown", func(s *spec) { s.Devices.PreferredLunBus = "ide" }, []string{"NotSupported:spec.devices.preferredLunBus"}},
		{"CD-ROM on virtio", func(s *spec) { s.Devices.PreferredCdromBus = kubevirtv1.DiskBusVirtio },
			[]string{"NotSupported:spec.devices.preferredCdromBus"}},
		{"disk cache unknown", func(s *spec) { s.Devices.PreferredDiskCache = "unsafe" }, []string{"NotSupported:spec.devices.preferredDiskCache"}},
		{"disk IO unknown", func(s *spec) { s.Devices.PreferredDiskIO = "io_uring" }, []string{"NotSupported:spec.devices.preferredDiskIO"}},
		{"interface model unknown", func(s *spec) { s.Devices.PreferredInterfaceModel = "vmxnet3" },
			[]string{"NotSupported:spec.devices.preferredInterfaceModel"}},
		{"input bus unknown", func(s *spec) { s.Devices.PreferredInputBus = "ps2" }, []string{"NotSupported:spec.devices.preferredInputBus"}},
		{"input type unknown", func(s *spec) { s.Devices.PreferredInputType = "mouse" }, []string{"NotSupported:spec.devices.preferredInputType"}},
		{"sound model unknown", func(s *spec) { s.Devices.PreferredSoundModel = "sb16" }, []string{"NotSupported:spec.devices.preferredSoundModel"}},
		{"panic model unknown", func(s *spec) { s.Devices.PreferredPanicDeviceModel = ptr(kubevirtv1.PanicDeviceModel("s390")) },
			[]string{"NotSupported:spec.devices.preferredPanicDeviceModel"}},
		{"persistent TPM refused", func(s *spec) { s.Devices.PreferredTPM.Persistent = ptr(true) },
			[]string{"Forbidden:spec.devices.preferredTPM.persistent"}},
		{"vGPU options refused", func(s *spec) { s.Devices.PreferredVirtualGPUOptions = &kubevirtv1.VGPUOptions{} },
			[]string{"Forbidden:spec.devices.preferredVirtualGPUOptions"}},
		{"persistent EFI refused", func(s *spec) { s.Firmware.PreferredEfi.Persistent = ptr(true) },
			[]string{"Forbidden:spec.firmware.preferredEfi.persistent"}},
		{"machine type unknown", func(s *spec) { s.Machine.PreferredMachineType = "virt" },
			[]string{"NotSupported:spec.machine.preferredMachineType"}},
		{"subdomain not a DNS label", func(s *spec) { s.PreferredSubdomain = ptr("Not_A_Label") }, []string{"Invalid:spec.preferredSubdomain"}},
		{"grace period negative", func(s *spec) { s.PreferredTerminationGracePeriodSeconds = ptr(int64(-1)) },
			[]string{"Invalid:spec.preferredTerminationGracePeriodSeconds"}},
		{"required vCPUs missing", func(s *spec) { s.Requirements.CPU.Guest = 0 }, []string{"Required:spec.requirements.cpu.guest"}},
		{"required vCPUs negative", func(s *spec) { s.Requirements.CPU.Guest = -2 }, []string{"Invalid:spec.requirements.cpu.guest"}},
		{"required memory missing", func(s *spec) { s.Requirements.Memory.Guest = resource.Quantity{} },
			[]string{"Required:spec.requirements.memory.guest"}},
		{"required memory negative", func(s *spec) { s.Requirements.Memory.Guest = resource.MustParse("-1Gi") },
			[]string{"Invalid:spec.requirements.memory.guest"}},
		// Another architecture's preference (common-instancetypes ship arm64 and s390x ones) is
		// accepted: a VirtualMachine using it is refused when its instance is built.
		{"other architecture accepted", func(s *spec) {
			s.PreferredArchitecture = ptr("arm64")
			s.Requirements.Architecture = ptr("arm64")
		}, nil},
		{"annotation key invalid", func(s *spec) { s.Annotations = map[string]string{"-x": "y"} }, []string{"Invalid:spec.annotations"}},
		{"sidecar hooks refused", func(s *spec) { s.Annotations = map[string]string{"hooks.kubevirt.io/hookSidecars": "[]"} },
			[]string{"Forbidden:spec.annotations[hooks.kubevirt.io/hookSidecars]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validPreferenceSpec()
			tt.mutate(&s)
			p := &v1beta1.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "vms"}, Spec: s}
			compareErrs(t, tt.want, ValidateVirtualMachinePreference(p))
			cp := &v1beta1.VirtualMachineClusterPreference{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: *s.DeepCopy()}
			compareErrs(t, tt.want, ValidateVirtualMachineClusterPreference(cp))
		})
	}
}

// TestCommonPreferences runs preferences shaped like those common-instancetypes ships (written
// for this test, in KubeVirt's JSON): what NativeVirt implements is accepted; Windows 11's
// persistent TPM and EFI variables are refused, as in an instance.
func TestCommonPreferences(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     []string
	}{
		{"linux guest", `
spec:
  annotations: {vm.kubevirt.io/os: linux}
  devices: {preferredDiskBus: virtio, preferredInterfaceModel: virtio, preferredRng: {}}
  requirements: {cpu: {guest: 1}, memory: {guest: 512Mi}}`, nil},
		{"spread for packet processing", `
spec:
  cpu:
    preferredCPUTopology: spread
    spreadOptions: {across: SocketsCoresThreads, ratio: 4}
  devices: {preferredDiskBus: virtio, preferredDiskDedicatedIoThread: true, preferredNetworkInterfaceMultiQueue: true}
  requirements: {cpu: {guest: 8}, memory: {guest: 1.5Gi}}`, nil},
		{"legacy guest", `
spec:
  devices: {preferredDiskBus: sata, preferredInterfaceModel: e1000}`, nil},
		{"arm64 guest", `
spec:
  preferredArchitecture: arm64
  requirements: {architecture: arm64, cpu: {guest: 1}, memory: {guest: 2Gi}}`, nil},
		{"windows server", `
spec:
  clock:
    preferredClockOffset: {utc: {}}
    preferredTimer: {hpet: {present: false}, hyperv: {}, pit: {tickPolicy: delay}, rtc: {tickPolicy: catchup}}
  cpu: {preferredCPUTopology: sockets}
  devices: {preferredAutoattachInputDevice: true, preferredDiskBus: sata, preferredInterfaceModel: e1000e}
  features:
    preferredAcpi: {}
    preferredApic: {}
    preferredHyperv: {relaxed: {}, vapic: {}, spinlocks: {spinlocks: 8191}, synictimer: {direct: {}}}
    preferredSmm: {}
  firmware: {preferredEfi: {secureBoot: true}}
  preferredTerminationGracePeriodSeconds: 3600`, nil},
		{"windows 11", `
spec:
  devices: {preferredDiskBus: sata, preferredTPM: {persistent: true}}
  features: {preferredSmm: {}}
  firmware: {preferredEfi: {persistent: true, secureBoot: true}}`,
			[]string{"Forbidden:spec.devices.preferredTPM.persistent", "Forbidden:spec.firmware.preferredEfi.persistent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &v1beta1.VirtualMachineClusterPreference{}
			if err := yaml.UnmarshalStrict([]byte(tt.manifest), p); err != nil {
				t.Fatalf("decode: %v", err)
			}
			p.Name = "common"
			compareErrs(t, tt.want, ValidateVirtualMachineClusterPreference(p))
		})
	}
}

func TestPreferenceUpdate(t *testing.T) {
	old := &v1beta1.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "vms"}, Spec: validPreferenceSpec()}
	changed := old.DeepCopy()
	changed.Spec.Devices.PreferredDiskBus = kubevirtv1.DiskBusSATA
	compareErrs(t, nil, ValidateVirtualMachinePreferenceUpdate(changed, old))
	broken := old.DeepCopy()
	broken.Spec.Devices.PreferredDiskBus = "ide"
	compareErrs(t, []string{"NotSupported:spec.devices.preferredDiskBus"}, ValidateVirtualMachinePreferenceUpdate(broken, old))

	cold := &v1beta1.VirtualMachineClusterPreference{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: validPreferenceSpec()}
	cbroken := cold.DeepCopy()
	cbroken.Spec.Requirements.CPU.Guest = 0
	compareErrs(t, []string{"Required:spec.requirements.cpu.guest"}, ValidateVirtualMachineClusterPreferenceUpdate(cbroken, cold))
}

func TestPreferenceNilSafety(t *testing.T) {
	compareErrs(t, []string{"Required:metadata"}, ValidateVirtualMachinePreference(nil))
	compareErrs(t, []string{"Required:metadata"}, ValidateVirtualMachineClusterPreference(nil))
	compareErrs(t, []string{"Required:metadata"}, ValidateVirtualMachinePreferenceUpdate(nil, nil))
	compareErrs(t, []string{"Required:metadata"}, ValidateVirtualMachineClusterPreferenceUpdate(&v1beta1.VirtualMachineClusterPreference{}, nil))
	compareErrs(t, []string{"Required:spec"}, ValidatePreferenceSpec(nil, field.NewPath("spec")))
	// Sub-structs left nil are skipped.
	compareErrs(t, nil, ValidatePreferenceSpec(&v1beta1.VirtualMachinePreferenceSpec{
		CPU: &v1beta1.CPUPreferences{}, Devices: &v1beta1.DevicePreferences{}, Firmware: &v1beta1.FirmwarePreferences{},
		Requirements: &v1beta1.PreferenceRequirements{}, Machine: &v1beta1.MachinePreferences{},
	}, field.NewPath("spec")))
}

func TestWarningsForDeprecatedTopologies(t *testing.T) {
	for topology, want := range map[v1beta1.PreferredCPUTopology][]string{
		v1beta1.DeprecatedPreferSpread: {"PreferredCPUTopology preferSpread is deprecated for removal in a future release, please use spread instead"},
		v1beta1.DeprecatedPreferAny:    {"PreferredCPUTopology preferAny is deprecated for removal in a future release, please use any instead"},
		v1beta1.Spread:                 nil,
	} {
		spec := &v1beta1.VirtualMachinePreferenceSpec{CPU: &v1beta1.CPUPreferences{PreferredCPUTopology: ptr(topology)}}
		if diff := cmp.Diff(want, WarningsForPreferenceSpec(spec)); diff != "" {
			t.Errorf("%s: warnings (-want +got):\n%s", topology, diff)
		}
	}
	if got := WarningsForPreferenceSpec(nil); got != nil {
		t.Errorf("nil spec: warnings %v", got)
	}
}
