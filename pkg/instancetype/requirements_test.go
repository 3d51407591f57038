package instancetype

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func requireCPU(guest int32, pref *v1beta1.VirtualMachinePreferenceSpec) *v1beta1.VirtualMachinePreferenceSpec {
	if pref == nil {
		pref = &v1beta1.VirtualMachinePreferenceSpec{}
	}
	pref.Requirements = &v1beta1.PreferenceRequirements{CPU: &v1beta1.CPUPreferenceRequirement{Guest: guest}}
	return pref
}

func requireMemory(guest string) *v1beta1.VirtualMachinePreferenceSpec {
	return &v1beta1.VirtualMachinePreferenceSpec{Requirements: &v1beta1.PreferenceRequirements{
		Memory: &v1beta1.MemoryPreferenceRequirement{Guest: resource.MustParse(guest)}}}
}

func requireArch(arch string) *v1beta1.VirtualMachinePreferenceSpec {
	return &v1beta1.VirtualMachinePreferenceSpec{Requirements: &v1beta1.PreferenceRequirements{Architecture: &arch}}
}

func cpuSpec(sockets, cores, threads int32) *kubevirtv1.VirtualMachineInstanceSpec {
	return &kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{
		CPU: &kubevirtv1.CPU{Sockets: sockets, Cores: cores, Threads: threads}}}
}

func resourcesSpec(requests, limits corev1.ResourceList) *kubevirtv1.VirtualMachineInstanceSpec {
	return &kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{
		Resources: kubevirtv1.ResourceRequirements{Requests: requests, Limits: limits}}}
}

func TestCheckRequirements(t *testing.T) {
	const (
		cpuPath = "spec.template.spec.domain.cpu"
		memPath = "spec.template.spec.domain.memory"
	)
	vmCPU := func(have, want int32, as string) string {
		return "insufficient CPU resources of " + itoa(have) + " vCPU provided by VirtualMachine, preference requires " +
			itoa(want) + " vCPU provided as " + as
	}
	guestMemory := func(q string) *kubevirtv1.VirtualMachineInstanceSpec {
		m := resource.MustParse(q)
		return &kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Memory: &kubevirtv1.Memory{Guest: &m}}}
	}
	all := requireCPU(4, nil)
	all.Requirements.Memory = &v1beta1.MemoryPreferenceRequirement{Guest: resource.MustParse("2Gi")}
	all.Requirements.Architecture = new("arm64")

	for _, tc := range []struct {
		name string
		it   *v1beta1.VirtualMachineInstancetypeSpec
		pref *v1beta1.VirtualMachinePreferenceSpec
		spec *kubevirtv1.VirtualMachineInstanceSpec
		want field.ErrorList
	}{
		{name: "no preference", it: instancetypeSpec(1, "1Gi"), spec: cpuSpec(0, 0, 0)},
		{name: "no requirements", pref: &v1beta1.VirtualMachinePreferenceSpec{}, spec: cpuSpec(0, 0, 0)},
		{name: "instance type has the vCPUs", it: instancetypeSpec(2, "1Gi"), pref: requireCPU(2, nil), spec: cpuSpec(2, 1, 1)},
		{
			name: "instance type lacks vCPUs", it: instancetypeSpec(1, "1Gi"), pref: requireCPU(2, nil), spec: cpuSpec(1, 1, 1),
			want: field.ErrorList{unmetErr("spec.instancetype", "insufficient CPU resources of 1 vCPU provided by instance type, preference requires 2 vCPU")},
		},
		{name: "instance type has the memory", it: instancetypeSpec(1, "2Gi"), pref: requireMemory("2Gi"), spec: cpuSpec(0, 0, 0)},
		{
			name: "instance type lacks memory", it: instancetypeSpec(1, "1Gi"), pref: requireMemory("2Gi"), spec: guestMemory("4Gi"),
			want: field.ErrorList{unmetErr("spec.instancetype", "insufficient Memory resources of 1Gi provided by instance type, preference requires 2Gi")},
		},
		{name: "VM sockets (default)", pref: requireCPU(2, nil), spec: cpuSpec(2, 0, 0)},
		{
			name: "VM lacks sockets", pref: requireCPU(2, nil), spec: cpuSpec(1, 0, 0),
			want: field.ErrorList{unmetErr(cpuPath+".sockets", vmCPU(1, 2, "sockets"))},
		},
		{
			name: "VM cores do not count as sockets", pref: requireCPU(2, topologyPref(v1beta1.Sockets)), spec: cpuSpec(1, 4, 0),
			want: field.ErrorList{unmetErr(cpuPath+".sockets", vmCPU(1, 2, "sockets"))},
		},
		{name: "VM cores", pref: requireCPU(2, topologyPref(v1beta1.Cores)), spec: cpuSpec(0, 2, 0)},
		{
			name: "VM lacks cores (preferCores)", pref: requireCPU(2, topologyPref(v1beta1.DeprecatedPreferCores)), spec: cpuSpec(2, 1, 0),
			want: field.ErrorList{unmetErr(cpuPath+".cores", vmCPU(1, 2, "cores"))},
		},
		{
			name: "VM lacks threads", pref: requireCPU(2, topologyPref(v1beta1.Threads)), spec: cpuSpec(0, 0, 1),
			want: field.ErrorList{unmetErr(cpuPath+".threads", vmCPU(1, 2, "threads"))},
		},
		{name: "VM spread across sockets and cores", pref: requireCPU(6, topologyPref(v1beta1.Spread)), spec: cpuSpec(3, 2, 0)},
		{
			name: "VM lacks spread across sockets and cores", pref: requireCPU(4, topologyPref(v1beta1.Spread)), spec: cpuSpec(1, 1, 4),
			want: field.ErrorList{
				unmetErr(cpuPath+".sockets", vmCPU(1, 4, "SocketsCores")),
				unmetErr(cpuPath+".cores", vmCPU(1, 4, "SocketsCores")),
			},
		},
		{
			name: "VM lacks spread across cores and threads", pref: requireCPU(4, spreadPref(new(v1beta1.SpreadAcrossCoresThreads), nil)), spec: cpuSpec(4, 1, 1),
			want: field.ErrorList{
				unmetErr(cpuPath+".cores", vmCPU(1, 4, "CoresThreads")),
				unmetErr(cpuPath+".threads", vmCPU(1, 4, "CoresThreads")),
			},
		},
		{name: "VM spread across sockets, cores and threads", pref: requireCPU(8, spreadPref(new(v1beta1.SpreadAcrossSocketsCoresThreads), nil)), spec: cpuSpec(2, 2, 2)},
		{
			name: "VM lacks spread across sockets, cores and threads", pref: requireCPU(8, spreadPref(new(v1beta1.SpreadAcrossSocketsCoresThreads), nil)), spec: cpuSpec(2, 2, 1),
			want: field.ErrorList{
				unmetErr(cpuPath+".sockets", vmCPU(4, 8, "SocketsCoresThreads")),
				unmetErr(cpuPath+".cores", vmCPU(4, 8, "SocketsCoresThreads")),
				unmetErr(cpuPath+".threads", vmCPU(4, 8, "SocketsCoresThreads")),
			},
		},
		{name: "VM any counts every vCPU", pref: requireCPU(4, topologyPref(v1beta1.Any)), spec: cpuSpec(2, 2, 1)},
		{name: "VM any counts unset parts as 1", pref: requireCPU(4, topologyPref(v1beta1.Any)), spec: cpuSpec(0, 4, 0)},
		{
			name: "VM lacks any", pref: requireCPU(4, topologyPref(v1beta1.DeprecatedPreferAny)), spec: cpuSpec(2, 1, 1),
			want: field.ErrorList{
				unmetErr(cpuPath+".cores", vmCPU(2, 4, "cores, sockets and threads")),
				unmetErr(cpuPath+".sockets", vmCPU(2, 4, "cores, sockets and threads")),
				unmetErr(cpuPath+".threads", vmCPU(2, 4, "cores, sockets and threads")),
			},
		},
		{name: "VM sockets from the CPU limit", pref: requireCPU(3, nil), spec: resourcesSpec(nil, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")})},
		{name: "VM sockets from the CPU request, rounded up", pref: requireCPU(2, nil), spec: resourcesSpec(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}, nil)},
		{
			name: "VM without CPU has one socket", pref: requireCPU(2, nil), spec: &kubevirtv1.VirtualMachineInstanceSpec{},
			want: field.ErrorList{unmetErr(cpuPath+".sockets", vmCPU(1, 2, "sockets"))},
		},
		{
			name: "VM requirement with an unknown spread level", pref: requireCPU(2, spreadPref(new(v1beta1.SpreadAcross("Dies")), nil)), spec: cpuSpec(2, 2, 2),
			want: field.ErrorList{field.NotSupported(field.NewPath("preference", "spec", "cpu", "spreadOptions", "across"), v1beta1.SpreadAcross("Dies"), supportedSpreadAcross)},
		},
		{name: "VM memory.guest", pref: requireMemory("2Gi"), spec: guestMemory("2Gi")},
		{
			name: "VM lacks memory.guest", pref: requireMemory("2Gi"), spec: guestMemory("1Gi"),
			want: field.ErrorList{unmetErr(memPath, "insufficient Memory resources of 1Gi provided by VirtualMachine, preference requires 2Gi")},
		},
		{name: "VM memory from the request", pref: requireMemory("2Gi"), spec: resourcesSpec(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}, nil)},
		{
			name: "VM memory from the limit", pref: requireMemory("2Gi"), spec: resourcesSpec(nil, corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}),
			want: field.ErrorList{unmetErr(memPath, "insufficient Memory resources of 1Gi provided by VirtualMachine, preference requires 2Gi")},
		},
		{
			name: "VM memory from the huge page size", pref: requireMemory("2Gi"),
			spec: &kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Memory: &kubevirtv1.Memory{Hugepages: &kubevirtv1.Hugepages{PageSize: "1Gi"}}}},
			want: field.ErrorList{unmetErr(memPath, "insufficient Memory resources of 1Gi provided by VirtualMachine, preference requires 2Gi")},
		},
		{
			name: "VM without memory", pref: requireMemory("2Gi"), spec: &kubevirtv1.VirtualMachineInstanceSpec{},
			want: field.ErrorList{unmetErr(memPath, "insufficient Memory resources of 0 provided by VirtualMachine, preference requires 2Gi")},
		},
		{name: "architecture defaults to amd64", pref: requireArch("amd64"), spec: &kubevirtv1.VirtualMachineInstanceSpec{}},
		{name: "architecture given", pref: requireArch("arm64"), spec: &kubevirtv1.VirtualMachineInstanceSpec{Architecture: "arm64"}},
		{
			name: "architecture differs", pref: requireArch("arm64"), spec: &kubevirtv1.VirtualMachineInstanceSpec{},
			want: field.ErrorList{unmetErr("spec.template.spec.architecture", "preference requires architecture arm64 but amd64 is being requested")},
		},
		{
			name: "every unmet requirement", it: instancetypeSpec(2, "1Gi"), pref: all, spec: &kubevirtv1.VirtualMachineInstanceSpec{Architecture: "s390x"},
			want: field.ErrorList{
				unmetErr("spec.instancetype", "insufficient CPU resources of 2 vCPU provided by instance type, preference requires 4 vCPU"),
				unmetErr("spec.instancetype", "insufficient Memory resources of 1Gi provided by instance type, preference requires 2Gi"),
				unmetErr("spec.template.spec.architecture", "preference requires architecture arm64 but s390x is being requested"),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErrs(t, CheckRequirements(templatePath, tc.it, tc.pref, tc.spec), tc.want...)
		})
	}
}

func TestCheckRequirementsPaths(t *testing.T) {
	pref := requireCPU(2, nil)
	// Without a path the template is a VirtualMachine's.
	wantErrs(t, CheckRequirements(nil, nil, pref, cpuSpec(1, 0, 0)),
		unmetErr("spec.template.spec.domain.cpu.sockets", "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as sockets"))
	wantErrs(t, CheckRequirements(nil, instancetypeSpec(1, "1Gi"), pref, cpuSpec(1, 0, 0)),
		unmetErr("spec.instancetype", "insufficient CPU resources of 1 vCPU provided by instance type, preference requires 2 vCPU"))
}

func itoa(v int32) string {
	return strconv.Itoa(int(v))
}
