package instancetype

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// memoryOf is the memory Apply gives for an instance type's 1Gi guest.
func memoryOf(q string) *kubevirtv1.Memory {
	m := resource.MustParse(q)
	return &kubevirtv1.Memory{Guest: &m}
}

func TestApplyCPU(t *testing.T) {
	full := instancetypeSpec(4, "1Gi")
	full.CPU.Model = new("Skylake-Server")
	full.CPU.DedicatedCPUPlacement = new(true)
	full.CPU.IsolateEmulatorThread = new(true)
	full.CPU.NUMA = &kubevirtv1.NUMA{GuestMappingPassthrough: &kubevirtv1.NUMAGuestMappingPassthrough{}}
	full.CPU.Realtime = &kubevirtv1.Realtime{Mask: "0-3"}
	full.CPU.MaxSockets = new(int32(8))

	for _, tc := range []struct {
		name string
		it   *v1beta1.VirtualMachineInstancetypeSpec
		pref *v1beta1.VirtualMachinePreferenceSpec
		spec kubevirtv1.VirtualMachineInstanceSpec
		want *kubevirtv1.CPU
	}{
		{name: "sockets by default", it: instancetypeSpec(4, "1Gi"), want: &kubevirtv1.CPU{Sockets: 4, Cores: 1, Threads: 1}},
		{name: "preferred cores", it: instancetypeSpec(4, "1Gi"), pref: topologyPref(v1beta1.Cores), want: &kubevirtv1.CPU{Sockets: 1, Cores: 4, Threads: 1}},
		{name: "preferred spread", it: instancetypeSpec(8, "1Gi"), pref: spreadPref(new(v1beta1.SpreadAcrossSocketsCoresThreads), nil), want: &kubevirtv1.CPU{Sockets: 2, Cores: 2, Threads: 2}},
		{
			name: "every CPU setting copied", it: full,
			want: &kubevirtv1.CPU{
				Sockets: 4, Cores: 1, Threads: 1, MaxSockets: 8, Model: "Skylake-Server", DedicatedCPUPlacement: true, IsolateEmulatorThread: true,
				NUMA: &kubevirtv1.NUMA{GuestMappingPassthrough: &kubevirtv1.NUMAGuestMappingPassthrough{}}, Realtime: &kubevirtv1.Realtime{Mask: "0-3"},
			},
		},
		{
			name: "the template's model, features and other settings stay without the instance type's", it: instancetypeSpec(2, "1Gi"),
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{
				Model: "host-passthrough", Features: []kubevirtv1.CPUFeature{{Name: "vmx"}}, DedicatedCPUPlacement: true,
				NUMA: &kubevirtv1.NUMA{}, Realtime: &kubevirtv1.Realtime{}, IsolateEmulatorThread: true,
			}}},
			want: &kubevirtv1.CPU{
				Sockets: 2, Cores: 1, Threads: 1, Model: "host-passthrough", Features: []kubevirtv1.CPUFeature{{Name: "vmx"}},
				DedicatedCPUPlacement: true, NUMA: &kubevirtv1.NUMA{}, Realtime: &kubevirtv1.Realtime{}, IsolateEmulatorThread: true,
			},
		},
		{
			name: "the instance type's maxSockets replaces the template's", it: full,
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{MaxSockets: 16}}},
			want: &kubevirtv1.CPU{
				Sockets: 4, Cores: 1, Threads: 1, MaxSockets: 8, Model: "Skylake-Server", DedicatedCPUPlacement: true, IsolateEmulatorThread: true,
				NUMA: &kubevirtv1.NUMA{GuestMappingPassthrough: &kubevirtv1.NUMAGuestMappingPassthrough{}}, Realtime: &kubevirtv1.Realtime{Mask: "0-3"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := expand(tc.it, tc.pref, metav1.ObjectMeta{}, tc.spec)
			wantNoErrs(t, got.errs)
			want := *tc.spec.DeepCopy()
			want.Domain.CPU = tc.want
			want.Domain.Memory = memoryOf("1Gi")
			wantSpec(t, got.spec, want)
		})
	}
}

func TestApplyCPUConflicts(t *testing.T) {
	const cpu = "spec.template.spec.domain.cpu"
	withCPU := func(c *kubevirtv1.CPU) kubevirtv1.VirtualMachineInstanceSpec {
		return kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{CPU: c}}
	}
	full := instancetypeSpec(2, "1Gi")
	full.CPU.Model = new("host-model")
	full.CPU.DedicatedCPUPlacement = new(false)
	full.CPU.IsolateEmulatorThread = new(false)
	full.CPU.NUMA = &kubevirtv1.NUMA{}
	full.CPU.Realtime = &kubevirtv1.Realtime{}
	for _, tc := range []struct {
		name string
		it   *v1beta1.VirtualMachineInstancetypeSpec
		spec kubevirtv1.VirtualMachineInstanceSpec
		want field.ErrorList
	}{
		{name: "sockets", it: instancetypeSpec(2, "1Gi"), spec: withCPU(&kubevirtv1.CPU{Sockets: 2}), want: field.ErrorList{conflictErr(cpu + ".sockets")}},
		{name: "cores", it: instancetypeSpec(2, "1Gi"), spec: withCPU(&kubevirtv1.CPU{Cores: 2}), want: field.ErrorList{conflictErr(cpu + ".cores")}},
		{name: "threads", it: instancetypeSpec(2, "1Gi"), spec: withCPU(&kubevirtv1.CPU{Threads: 2}), want: field.ErrorList{conflictErr(cpu + ".threads")}},
		{
			name: "CPU request and limit",
			it:   instancetypeSpec(2, "1Gi"),
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Resources: kubevirtv1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			}}},
			want: field.ErrorList{
				conflictErr("spec.template.spec.domain.resources.requests.cpu"),
				conflictErr("spec.template.spec.domain.resources.limits.cpu"),
			},
		},
		{
			name: "every setting the instance type gives too, in KubeVirt's order",
			it:   full,
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{
				Resources: kubevirtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
				CPU: &kubevirtv1.CPU{
					Sockets: 1, Cores: 1, Threads: 1, Model: "Haswell", DedicatedCPUPlacement: true, IsolateEmulatorThread: true,
					NUMA: &kubevirtv1.NUMA{}, Realtime: &kubevirtv1.Realtime{}, MaxSockets: 4,
				},
			}},
			want: field.ErrorList{
				conflictErr("spec.template.spec.domain.resources.requests.cpu"),
				conflictErr(cpu + ".sockets"),
				conflictErr(cpu + ".cores"),
				conflictErr(cpu + ".threads"),
				conflictErr(cpu + ".model"),
				conflictErr(cpu + ".dedicatedCPUPlacement"),
				conflictErr(cpu + ".isolateEmulatorThread"),
				conflictErr(cpu + ".numa"),
				conflictErr(cpu + ".realtime"),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErrs(t, expand(tc.it, nil, metav1.ObjectMeta{}, tc.spec).errs, tc.want...)
		})
	}
}

func TestApplySpreadErrorChangesNothing(t *testing.T) {
	it := instancetypeSpec(3, "1Gi")
	it.NodeSelector = map[string]string{"a": "b"}
	it.Annotations = map[string]string{"c": "d"}
	spec := kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Sockets: 3}}}
	got := expand(it, topologyPref(v1beta1.Spread), metav1.ObjectMeta{}, spec)
	// The spread error comes alone, before the template's own conflict.
	wantErrs(t, got.errs, field.Invalid(field.NewPath("instancetype", "spec", "cpu", "guest"), int32(3),
		"3 vCPUs provided by the instance type are not divisible by the Spec.PreferSpreadSocketToCoreRatio or "+
			"Spec.CPU.PreferSpreadOptions.Ratio of 2 provided by the preference"))
	wantSpec(t, got.spec, spec)
	if got.meta.Annotations != nil {
		t.Errorf("annotations changed: %v", got.meta.Annotations)
	}
}
