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

func TestApplyMemory(t *testing.T) {
	q := resource.MustParse
	withMemory := func(it *v1beta1.VirtualMachineInstancetypeSpec, f func(*v1beta1.MemoryInstancetype)) *v1beta1.VirtualMachineInstancetypeSpec {
		f(&it.Memory)
		return it
	}
	for _, tc := range []struct {
		name        string
		it          *v1beta1.VirtualMachineInstancetypeSpec
		wantMemory  *kubevirtv1.Memory
		wantRequest *resource.Quantity
	}{
		{name: "guest", it: instancetypeSpec(1, "2Gi"), wantMemory: memoryOf("2Gi")},
		{
			name: "hugepages and maxGuest",
			it: withMemory(instancetypeSpec(1, "2Gi"), func(m *v1beta1.MemoryInstancetype) {
				m.Hugepages = &kubevirtv1.Hugepages{PageSize: "1Gi"}
				m.MaxGuest = new(q("8Gi"))
			}),
			wantMemory: &kubevirtv1.Memory{Guest: new(q("2Gi")), Hugepages: &kubevirtv1.Hugepages{PageSize: "1Gi"}, MaxGuest: new(q("8Gi"))},
		},
		{
			// 1Gi lowered by 15% in float32, truncated, as KubeVirt computes it: 912680576, not
			// the exact 912680550.4.
			name:        "overcommit lowers the request as KubeVirt computes it",
			it:          withMemory(instancetypeSpec(1, "1Gi"), func(m *v1beta1.MemoryInstancetype) { m.OvercommitPercent = 15 }),
			wantMemory:  memoryOf("1Gi"),
			wantRequest: resource.NewQuantity(912680576, resource.BinarySI),
		},
		{
			name:        "overcommit keeps the guest's format",
			it:          withMemory(instancetypeSpec(1, "512M"), func(m *v1beta1.MemoryInstancetype) { m.OvercommitPercent = 15 }),
			wantMemory:  memoryOf("512M"),
			wantRequest: new(q("435200k")),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := expand(tc.it, nil, metav1.ObjectMeta{}, kubevirtv1.VirtualMachineInstanceSpec{})
			wantNoErrs(t, got.errs)
			want := kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{
				CPU: &kubevirtv1.CPU{Sockets: 1, Cores: 1, Threads: 1}, Memory: tc.wantMemory}}
			if tc.wantRequest != nil {
				want.Domain.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: *tc.wantRequest}
			}
			wantSpec(t, got.spec, want)
			if tc.wantRequest != nil {
				if r := got.spec.Domain.Resources.Requests[corev1.ResourceMemory]; r.String() != tc.wantRequest.String() {
					t.Errorf("memory request %s, want %s", r.String(), tc.wantRequest.String())
				}
			}
		})
	}
}

func TestOvercommittedRequest(t *testing.T) {
	for _, tc := range []struct {
		guest   string
		percent int32
		want    string
	}{
		{"1Gi", 15, "912680576"},
		{"2Gi", 50, "1Gi"},
		{"3Gi", 33, "2158220800"},
		{"1Gi", 100, "0"},
	} {
		if got := overcommittedRequest(resource.MustParse(tc.guest), tc.percent); got.String() != tc.want {
			t.Errorf("overcommittedRequest(%s, %d) = %s, want %s", tc.guest, tc.percent, got.String(), tc.want)
		}
	}
}

func TestApplyMemoryConflicts(t *testing.T) {
	memory := resource.MustParse("1Gi")
	for _, tc := range []struct {
		name string
		spec kubevirtv1.VirtualMachineInstanceSpec
		want *field.Error
	}{
		{
			name: "memory.guest",
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Memory: &kubevirtv1.Memory{Guest: &memory}}},
			want: conflictErr("spec.template.spec.domain.memory"),
		},
		{
			// KubeVirt 1.7 refuses any memory block, even settings the instance type leaves unset.
			name: "hugepages the instance type does not set",
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Memory: &kubevirtv1.Memory{Hugepages: &kubevirtv1.Hugepages{PageSize: "2Mi"}}}},
			want: conflictErr("spec.template.spec.domain.memory"),
		},
		{
			name: "only the first conflict",
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{
				Memory:    &kubevirtv1.Memory{},
				Resources: kubevirtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: memory}},
			}},
			want: conflictErr("spec.template.spec.domain.memory"),
		},
		{
			name: "memory request",
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Resources: kubevirtv1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceMemory: memory}, Limits: corev1.ResourceList{corev1.ResourceMemory: memory}}}},
			want: conflictErr("spec.template.spec.domain.resources.requests.memory"),
		},
		{
			name: "memory limit",
			spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Resources: kubevirtv1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: memory}}}},
			want: conflictErr("spec.template.spec.domain.resources.limits.memory"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErrs(t, expand(instancetypeSpec(1, "2Gi"), nil, metav1.ObjectMeta{}, tc.spec).errs, tc.want)
		})
	}
}
