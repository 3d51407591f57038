package instancetype

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// fullInstancetype sets every field of an instance type besides CPU and memory.
func fullInstancetype() *v1beta1.VirtualMachineInstancetypeSpec {
	it := instancetypeSpec(2, "1Gi")
	it.NodeSelector = map[string]string{"zone": "a"}
	it.SchedulerName = "custom"
	it.IOThreadsPolicy = new(kubevirtv1.IOThreadsPolicySupplementalPool)
	it.IOThreads = &kubevirtv1.DiskIOThreads{SupplementalPoolThreadCount: new(int32(4))}
	it.LaunchSecurity = &kubevirtv1.LaunchSecurity{SEV: &kubevirtv1.SEV{}}
	it.GPUs = []kubevirtv1.GPU{{Name: "gpu1", DeviceName: "nvidia.com/A100"}}
	it.HostDevices = []kubevirtv1.HostDevice{{Name: "dev1", DeviceName: "intel.com/qat"}}
	it.Annotations = map[string]string{"example.com/a": "1"}
	return it
}

func TestApplyInstancetypeFields(t *testing.T) {
	it := fullInstancetype()
	got := expand(it, nil, metav1.ObjectMeta{Annotations: map[string]string{"mine": "x"}},
		kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{IOThreads: &kubevirtv1.DiskIOThreads{}}})
	wantNoErrs(t, got.errs)
	wantSpec(t, got.spec, kubevirtv1.VirtualMachineInstanceSpec{
		NodeSelector:  map[string]string{"zone": "a"},
		SchedulerName: "custom",
		Domain: kubevirtv1.DomainSpec{
			CPU:             &kubevirtv1.CPU{Sockets: 2, Cores: 1, Threads: 1},
			Memory:          memoryOf("1Gi"),
			IOThreadsPolicy: new(kubevirtv1.IOThreadsPolicySupplementalPool),
			IOThreads:       &kubevirtv1.DiskIOThreads{SupplementalPoolThreadCount: new(int32(4))},
			LaunchSecurity:  &kubevirtv1.LaunchSecurity{SEV: &kubevirtv1.SEV{}},
			Devices: kubevirtv1.Devices{
				GPUs:        []kubevirtv1.GPU{{Name: "gpu1", DeviceName: "nvidia.com/A100"}},
				HostDevices: []kubevirtv1.HostDevice{{Name: "dev1", DeviceName: "intel.com/qat"}},
			},
		},
	})
	if diff := cmp.Diff(map[string]string{"mine": "x", "example.com/a": "1"}, got.meta.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

func TestApplyInstancetypeConflicts(t *testing.T) {
	const spec = "spec.template.spec"
	template := kubevirtv1.VirtualMachineInstanceSpec{
		NodeSelector:  map[string]string{"other": "key"},
		SchedulerName: "mine",
		Domain: kubevirtv1.DomainSpec{
			CPU:             &kubevirtv1.CPU{Sockets: 1},
			Memory:          &kubevirtv1.Memory{},
			IOThreadsPolicy: new(kubevirtv1.IOThreadsPolicyAuto),
			IOThreads:       &kubevirtv1.DiskIOThreads{SupplementalPoolThreadCount: new(int32(1))},
			LaunchSecurity:  &kubevirtv1.LaunchSecurity{TDX: &kubevirtv1.TDX{}},
			Devices: kubevirtv1.Devices{
				GPUs:        []kubevirtv1.GPU{{Name: "mine"}},
				HostDevices: []kubevirtv1.HostDevice{{Name: "mine"}},
			},
		},
	}
	got := expand(fullInstancetype(), nil, metav1.ObjectMeta{Annotations: map[string]string{"example.com/a": "2"}}, template)
	// Every part's conflicts, in KubeVirt's order.
	wantErrs(t, got.errs,
		conflictErr(spec+".nodeSelector"),
		conflictErr(spec+".schedulerName"),
		conflictErr(spec+".domain.cpu.sockets"),
		conflictErr(spec+".domain.memory"),
		conflictErr(spec+".domain.ioThreadsPolicy"),
		conflictErr(spec+".domain.ioThreads.supplementalPoolThreadCount"),
		conflictErr(spec+".domain.launchSecurity"),
		conflictErr(spec+".domain.devices.gpus"),
		conflictErr(spec+".domain.devices.hostDevices"),
		conflictErr("spec.template.metadata.annotations[example.com/a]"),
	)
}

// TestApplyInstancetypeUnsetFieldsNoConflict checks that a template field conflicts only with an
// instance type that sets it.
func TestApplyInstancetypeUnsetFieldsNoConflict(t *testing.T) {
	template := kubevirtv1.VirtualMachineInstanceSpec{
		NodeSelector:  map[string]string{"zone": "b"},
		SchedulerName: "mine",
		Domain: kubevirtv1.DomainSpec{
			IOThreadsPolicy: new(kubevirtv1.IOThreadsPolicyShared),
			IOThreads:       &kubevirtv1.DiskIOThreads{SupplementalPoolThreadCount: new(int32(1))},
			LaunchSecurity:  &kubevirtv1.LaunchSecurity{},
			Devices: kubevirtv1.Devices{
				GPUs:        []kubevirtv1.GPU{{Name: "mine"}},
				HostDevices: []kubevirtv1.HostDevice{{Name: "mine"}},
			},
		},
	}
	it := instancetypeSpec(1, "1Gi")
	// An ioThreads block without a pool size sets nothing.
	it.IOThreads = &kubevirtv1.DiskIOThreads{}
	got := expand(it, nil, metav1.ObjectMeta{}, template)
	wantNoErrs(t, got.errs)
	want := *template.DeepCopy()
	want.Domain.CPU = &kubevirtv1.CPU{Sockets: 1, Cores: 1, Threads: 1}
	want.Domain.Memory = memoryOf("1Gi")
	wantSpec(t, got.spec, want)
}

func TestApplyInstancetypeDoesNotAlias(t *testing.T) {
	it := fullInstancetype()
	it.CPU.NUMA = &kubevirtv1.NUMA{}
	before := it.DeepCopy()
	var meta metav1.ObjectMeta
	var spec kubevirtv1.VirtualMachineInstanceSpec
	wantNoErrs(t, Apply(templatePath, it, nil, &meta, &spec))
	// Change everything Apply put in; the instance type must not change with it.
	spec.NodeSelector["zone"] = "changed"
	*spec.Domain.IOThreadsPolicy = kubevirtv1.IOThreadsPolicyAuto
	*spec.Domain.IOThreads.SupplementalPoolThreadCount = 9
	spec.Domain.LaunchSecurity.SEV = nil
	spec.Domain.Devices.GPUs[0].Name = "changed"
	spec.Domain.Devices.HostDevices[0].Name = "changed"
	spec.Domain.CPU.NUMA.GuestMappingPassthrough = &kubevirtv1.NUMAGuestMappingPassthrough{}
	spec.Domain.Memory.Guest.Add(spec.Domain.Memory.Guest.DeepCopy())
	if diff := cmp.Diff(before, it, diffOpts...); diff != "" {
		t.Errorf("the instance type changed (-before +after):\n%s", diff)
	}
}

func TestApplyInstancetypeErrorsAreFieldErrors(t *testing.T) {
	errs := expand(instancetypeSpec(1, "1Gi"), nil, metav1.ObjectMeta{},
		kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Cores: 2}}}).errs
	if len(errs) != 1 {
		t.Fatalf("errors: %v", errs)
	}
	want := "spec.template.spec.domain.cpu.cores: Invalid value: VM field(s) spec.template.spec.domain.cpu.cores conflicts with selected instance type"
	if got := errs[0].Error(); got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	if got := errs.ToAggregate().Error(); got != want {
		t.Errorf("aggregate %q, want %q", got, want)
	}
}
