package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// validInstancetypeSpec is common-instancetypes' u1.medium with every optional field NativeVirt
// accepts set.
func validInstancetypeSpec() v1beta1.VirtualMachineInstancetypeSpec {
	return v1beta1.VirtualMachineInstancetypeSpec{
		CPU: v1beta1.CPUInstancetype{Guest: 1, Model: ptr("host-model"), MaxSockets: ptr(int32(4))},
		Memory: v1beta1.MemoryInstancetype{
			Guest: resource.MustParse("4Gi"), MaxGuest: qp("8Gi"), OvercommitPercent: 10,
		},
		NodeSelector:    map[string]string{"kubernetes.io/arch": "amd64"},
		SchedulerName:   "default-scheduler",
		IOThreadsPolicy: ptr(kubevirtv1.IOThreadsPolicySupplementalPool),
		IOThreads:       &kubevirtv1.DiskIOThreads{SupplementalPoolThreadCount: ptr(int32(2))},
		Annotations:     map[string]string{"instancetype.kubevirt.io/class": "general.purpose"},
	}
}

func TestValidInstancetypesAreAccepted(t *testing.T) {
	it := &v1beta1.VirtualMachineInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "u1.medium", Namespace: "vms"}, Spec: validInstancetypeSpec()}
	compareErrs(t, nil, ValidateVirtualMachineInstancetype(it))
	cit := &v1beta1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "u1.medium"}, Spec: validInstancetypeSpec()}
	compareErrs(t, nil, ValidateVirtualMachineClusterInstancetype(cit))
	// The least an instance type needs: vCPUs and memory.
	minimal := &v1beta1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "tiny"}, Spec: v1beta1.VirtualMachineInstancetypeSpec{
		CPU: v1beta1.CPUInstancetype{Guest: 1}, Memory: v1beta1.MemoryInstancetype{Guest: resource.MustParse("1M")},
	}}
	compareErrs(t, nil, ValidateVirtualMachineClusterInstancetype(minimal))
}

// TestInstancetypeRules breaks one rule at a time and expects exactly the errors named, for both
// kinds (they share the spec's rules).
func TestInstancetypeRules(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *v1beta1.VirtualMachineInstancetypeSpec)
		want   []string
	}{
		{"cpu.guest missing", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.CPU.Guest = 0 }, []string{"Required:spec.cpu.guest"}},
		{"cpu.guest negative", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.CPU.Guest = -1 }, []string{"Invalid:spec.cpu.guest"}},
		{"cpu.guest above the vCPU limit", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.CPU.Guest = 513 }, []string{"Invalid:spec.cpu.guest"}},
		{"cpu.guest at the vCPU limit", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.CPU.Guest = 512 }, nil},
		{"cpu.model empty", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.CPU.Model = ptr("") }, []string{"Invalid:spec.cpu.model"}},
		{"cpu.maxSockets zero", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.CPU.MaxSockets = ptr(int32(0)) }, []string{"Invalid:spec.cpu.maxSockets"}},
		{"memory.guest missing", func(s *v1beta1.VirtualMachineInstancetypeSpec) {
			s.Memory.Guest = resource.Quantity{}
			s.Memory.MaxGuest = nil
		}, []string{"Required:spec.memory.guest"}},
		{"memory.guest negative", func(s *v1beta1.VirtualMachineInstancetypeSpec) {
			s.Memory.Guest = resource.MustParse("-1Gi")
		}, []string{"Invalid:spec.memory.guest"}},
		{"memory.guest below what QEMU boots with", func(s *v1beta1.VirtualMachineInstancetypeSpec) {
			s.Memory.Guest = resource.MustParse("1k")
		}, []string{"Invalid:spec.memory.guest"}},
		{"memory.maxGuest below guest", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.Memory.MaxGuest = qp("2Gi") }, []string{"Invalid:spec.memory.maxGuest"}},
		{"memory.maxGuest equal to guest", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.Memory.MaxGuest = qp("4Gi") }, nil},
		{"overcommitPercent above 100", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.Memory.OvercommitPercent = 101 }, []string{"Invalid:spec.memory.overcommitPercent"}},
		{"overcommitPercent negative", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.Memory.OvercommitPercent = -1 }, []string{"Invalid:spec.memory.overcommitPercent"}},
		{"overcommitPercent 100", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.Memory.OvercommitPercent = 100 }, nil},
		{"ioThreadsPolicy unknown", func(s *v1beta1.VirtualMachineInstancetypeSpec) {
			s.IOThreadsPolicy = ptr(kubevirtv1.IOThreadsPolicy("many"))
		}, []string{"NotSupported:spec.ioThreadsPolicy"}},
		{"supplementalPool without a count", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.IOThreads = nil }, []string{"Required:spec.ioThreads.supplementalPoolThreadCount"}},
		{"nodeSelector key invalid", func(s *v1beta1.VirtualMachineInstancetypeSpec) {
			s.NodeSelector = map[string]string{"bad key": "x"}
		}, []string{"Invalid:spec.nodeSelector"}},
		{"nodeSelector value invalid", func(s *v1beta1.VirtualMachineInstancetypeSpec) {
			s.NodeSelector = map[string]string{"zone": "not a value"}
		}, []string{"Invalid:spec.nodeSelector"}},
		{"annotation key invalid", func(s *v1beta1.VirtualMachineInstancetypeSpec) {
			s.Annotations = map[string]string{"a/b/c": "x"}
		}, []string{"Invalid:spec.annotations"}},
		{"gpus refused", func(s *v1beta1.VirtualMachineInstancetypeSpec) {
			s.GPUs = []kubevirtv1.GPU{{Name: "g", DeviceName: "nvidia.com/x"}}
		}, []string{"Forbidden:spec.gpus"}},
		{"dedicated CPUs refused", func(s *v1beta1.VirtualMachineInstancetypeSpec) { s.CPU.DedicatedCPUPlacement = ptr(true) }, []string{"Forbidden:spec.cpu.dedicatedCPUPlacement"}},
		{"huge pages refused", func(s *v1beta1.VirtualMachineInstancetypeSpec) {
			s.Memory.Hugepages = &kubevirtv1.Hugepages{PageSize: "2Mi"}
		}, []string{"Forbidden:spec.memory.hugepages"}},
		{"sidecar hooks refused", func(s *v1beta1.VirtualMachineInstancetypeSpec) {
			s.Annotations = map[string]string{"hooks.kubevirt.io/hookSidecars": "[]"}
		}, []string{"Forbidden:spec.annotations[hooks.kubevirt.io/hookSidecars]"}},
		{"several at once", func(s *v1beta1.VirtualMachineInstancetypeSpec) {
			s.CPU.Guest = 0
			s.Memory.OvercommitPercent = 200
		}, []string{"Required:spec.cpu.guest", "Invalid:spec.memory.overcommitPercent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := validInstancetypeSpec()
			tt.mutate(&spec)
			it := &v1beta1.VirtualMachineInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "it", Namespace: "vms"}, Spec: spec}
			compareErrs(t, tt.want, ValidateVirtualMachineInstancetype(it))
			cit := &v1beta1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "it"}, Spec: *spec.DeepCopy()}
			compareErrs(t, tt.want, ValidateVirtualMachineClusterInstancetype(cit))
		})
	}
}

func TestInstancetypeNames(t *testing.T) {
	for name, want := range map[string][]string{
		"u1.medium":              nil,
		"":                       nil, // left to the registry (generateName)
		"U1.Medium":              {"Invalid:metadata.name"},
		"has space":              {"Invalid:metadata.name"},
		strings.Repeat("a", 254): {"Invalid:metadata.name"},
	} {
		it := &v1beta1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: validInstancetypeSpec()}
		compareErrs(t, want, ValidateVirtualMachineClusterInstancetype(it))
	}
}

// TestInstancetypeUpdate: the spec may change (VirtualMachines keep the revision they captured),
// but the new object must be valid.
func TestInstancetypeUpdate(t *testing.T) {
	old := &v1beta1.VirtualMachineInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "it", Namespace: "vms"}, Spec: validInstancetypeSpec()}
	changed := old.DeepCopy()
	changed.Spec.CPU.Guest = 4
	changed.Spec.Memory.Guest = resource.MustParse("8Gi")
	compareErrs(t, nil, ValidateVirtualMachineInstancetypeUpdate(changed, old))
	broken := old.DeepCopy()
	broken.Spec.CPU.Guest = 0
	compareErrs(t, []string{"Required:spec.cpu.guest"}, ValidateVirtualMachineInstancetypeUpdate(broken, old))

	cold := &v1beta1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "it"}, Spec: validInstancetypeSpec()}
	cbroken := cold.DeepCopy()
	cbroken.Spec.LaunchSecurity = &kubevirtv1.LaunchSecurity{}
	compareErrs(t, []string{"Forbidden:spec.launchSecurity"}, ValidateVirtualMachineClusterInstancetypeUpdate(cbroken, cold))
}

func TestInstancetypeNilSafety(t *testing.T) {
	compareErrs(t, []string{"Required:metadata"}, ValidateVirtualMachineInstancetype(nil))
	compareErrs(t, []string{"Required:metadata"}, ValidateVirtualMachineClusterInstancetype(nil))
	compareErrs(t, []string{"Required:metadata"}, ValidateVirtualMachineInstancetypeUpdate(nil, nil))
	compareErrs(t, []string{"Required:metadata"}, ValidateVirtualMachineClusterInstancetypeUpdate(&v1beta1.VirtualMachineClusterInstancetype{}, nil))
	compareErrs(t, []string{"Required:spec"}, ValidateInstancetypeSpec(nil, field.NewPath("spec")))
}
