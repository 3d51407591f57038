package convert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestConvertMemory(t *testing.T) {
	requests := func(q string) kubevirtv1.ResourceRequirements {
		return kubevirtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: qty(q)}}
	}
	tests := []struct {
		name    string
		spec    kubevirtv1.DomainSpec
		want    Memory
		wantErr string
	}{
		{name: "request in Mi", spec: kubevirtv1.DomainSpec{Resources: requests("128Mi")}, want: Memory{Unit: "MiB", Value: 128}},
		{name: "decimal request rounded up", spec: kubevirtv1.DomainSpec{Resources: requests("64M")}, want: Memory{Unit: "MiB", Value: 62}},
		{name: "Gi", spec: kubevirtv1.DomainSpec{Resources: requests("2Gi")}, want: Memory{Unit: "MiB", Value: 2048}},
		{
			name: "memory.guest wins over the request",
			spec: kubevirtv1.DomainSpec{Resources: requests("1Gi"), Memory: &kubevirtv1.Memory{Guest: ptr(qty("512Mi"))}},
			want: Memory{Unit: "MiB", Value: 512},
		},
		{
			name: "maxGuest equal to guest is fine",
			spec: kubevirtv1.DomainSpec{Memory: &kubevirtv1.Memory{Guest: ptr(qty("1Gi")), MaxGuest: ptr(qty("1Gi"))}},
			want: Memory{Unit: "MiB", Value: 1024},
		},
		{name: "neither set", wantErr: "spec.domain.resources.requests.memory"},
		{
			name:    "huge pages refused",
			spec:    kubevirtv1.DomainSpec{Resources: requests("1Gi"), Memory: &kubevirtv1.Memory{Hugepages: &kubevirtv1.Hugepages{PageSize: "2Mi"}}},
			wantErr: "spec.domain.memory.hugepages",
		},
		{
			name:    "memory hotplug refused",
			spec:    kubevirtv1.DomainSpec{Resources: requests("1Gi"), Memory: &kubevirtv1.Memory{MaxGuest: ptr(qty("4Gi"))}},
			wantErr: "spec.domain.memory.maxGuest",
		},
		{name: "zero", spec: kubevirtv1.DomainSpec{Resources: requests("0")}, wantErr: "must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := convertMemory(&tc.spec, field.NewPath("spec", "domain"))
			checkErrs(t, errs, tc.wantErr)
			if diff := cmp.Diff(tc.want, got); tc.wantErr == "" && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
