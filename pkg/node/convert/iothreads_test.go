package convert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestPlanIOThreads(t *testing.T) {
	virtio := func(name string, dedicated bool) kubevirtv1.Disk {
		d := kubevirtv1.Disk{Name: name, DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "virtio"}}}
		if dedicated {
			d.DedicatedIOThread = ptr(true)
		}
		return d
	}
	sata := kubevirtv1.Disk{Name: "s", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "sata"}}}
	cdrom := kubevirtv1.Disk{Name: "c", DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{}}}
	policy := func(p kubevirtv1.IOThreadsPolicy) *kubevirtv1.IOThreadsPolicy { return &p }
	tests := []struct {
		name    string
		spec    kubevirtv1.DomainSpec
		vcpus   uint32
		want    ioThreadPlan
		wantErr string
	}{{
		name:  "no policy, no dedicated disk: none",
		spec:  kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{virtio("a", false)}}},
		vcpus: 1,
		want:  ioThreadPlan{disks: map[string]uint{}},
	}, {
		name:  "dedicated disk without policy: shared thread for the rest",
		spec:  kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{virtio("a", false), virtio("b", true), sata, cdrom}}},
		vcpus: 1,
		want:  ioThreadPlan{count: 2, disks: map[string]uint{"a": 1, "b": 2}},
	}, {
		name:  "only a dedicated disk",
		spec:  kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{virtio("b", true)}}},
		vcpus: 1,
		want:  ioThreadPlan{count: 1, disks: map[string]uint{"b": 1}},
	}, {
		name: "shared",
		spec: kubevirtv1.DomainSpec{IOThreadsPolicy: policy("shared"),
			Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{virtio("a", false), virtio("b", false)}}},
		vcpus: 4,
		want:  ioThreadPlan{count: 1, disks: map[string]uint{"a": 1, "b": 1}},
	}, {
		name: "auto: up to two per vCPU, round robin",
		spec: kubevirtv1.DomainSpec{IOThreadsPolicy: policy("auto"),
			Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{virtio("a", false), virtio("b", false), virtio("c", false), virtio("d", true)}}},
		vcpus: 1,
		want:  ioThreadPlan{count: 3, disks: map[string]uint{"a": 1, "b": 2, "c": 1, "d": 3}},
	}, {
		name: "supplemental pool",
		spec: kubevirtv1.DomainSpec{IOThreadsPolicy: policy("supplementalPool"),
			IOThreads: &kubevirtv1.DiskIOThreads{SupplementalPoolThreadCount: ptr(int32(2))},
			Devices:   kubevirtv1.Devices{Disks: []kubevirtv1.Disk{virtio("a", false), virtio("b", false), virtio("c", false)}}},
		vcpus: 8,
		want:  ioThreadPlan{count: 2, disks: map[string]uint{"a": 1, "b": 2, "c": 1}},
	}, {
		name: "supplemental pool without a count",
		spec: kubevirtv1.DomainSpec{IOThreadsPolicy: policy("supplementalPool"),
			Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{virtio("a", false)}}},
		wantErr: "spec.domain.ioThreads.supplementalPoolThreadCount",
	}, {
		name: "unknown policy",
		spec: kubevirtv1.DomainSpec{IOThreadsPolicy: policy("lots"),
			Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{virtio("a", false)}}},
		wantErr: "spec.domain.ioThreadsPolicy",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := planIOThreads(&tc.spec, tc.vcpus, field.NewPath("spec", "domain"))
			checkErrs(t, errs, tc.wantErr)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(ioThreadPlan{})); tc.wantErr == "" && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
