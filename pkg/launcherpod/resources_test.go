package launcherpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestOverhead(t *testing.T) {
	tests := []struct{ guest, want string }{
		{"64M", "258Mi"},   // 2% of 64e6 bytes = 1.28e6 -> 2Mi
		{"1Gi", "277Mi"},   // 2% of 1Gi = 20.48Mi -> 21Mi
		{"4Gi", "338Mi"},   // 81.92Mi -> 82Mi
		{"100Mi", "258Mi"}, // exactly 2Mi
		{"0", "256Mi"},
	}
	for _, tc := range tests {
		got := Overhead(resource.MustParse(tc.guest))
		if want := resource.MustParse(tc.want); got.Cmp(want) != 0 {
			t.Errorf("Overhead(%s) = %s, want %s", tc.guest, got.String(), tc.want)
		}
	}
}

func TestGuestMemory(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	tests := []struct {
		name    string
		memory  *kubevirtv1.Memory
		res     kubevirtv1.ResourceRequirements
		want    string
		wantErr bool
	}{
		{name: "guest wins", memory: &kubevirtv1.Memory{Guest: q("1Gi")},
			res: kubevirtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}, want: "1Gi"},
		{name: "request", res: kubevirtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64M")}}, want: "64M"},
		{name: "limit only", res: kubevirtv1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}, want: "512Mi"},
		{name: "none", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Memory: tc.memory, Resources: tc.res}}
			got, err := GuestMemory(spec)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && got.Cmp(resource.MustParse(tc.want)) != 0 {
				t.Errorf("got %s, want %s", got.String(), tc.want)
			}
		})
	}
}

func TestComputeResources(t *testing.T) {
	list := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	tests := []struct {
		name      string
		res       kubevirtv1.ResourceRequirements
		emulation bool
		network   bool
		want      corev1.ResourceRequirements
	}{
		{
			name:      "seed VM under emulation: 64M + overhead, default cpu",
			res:       kubevirtv1.ResourceRequirements{Requests: list("memory", "64M")},
			emulation: true,
			want:      corev1.ResourceRequirements{Requests: list("memory", "334532608", "cpu", "100m")},
		},
		{
			name: "kvm device when not emulating",
			res:  kubevirtv1.ResourceRequirements{Requests: list("memory", "1Gi", "cpu", "2")},
			want: corev1.ResourceRequirements{
				Requests: list("memory", "1301Mi", "cpu", "2", KVMResource, "1"),
				Limits:   list(KVMResource, "1"),
			},
		},
		{
			name:      "limits get the overhead too",
			res:       kubevirtv1.ResourceRequirements{Requests: list("memory", "1Gi"), Limits: list("memory", "2Gi", "cpu", "1")},
			emulation: true,
			want: corev1.ResourceRequirements{
				Requests: list("memory", "1301Mi", "cpu", "1"),
				Limits:   list("memory", "2325Mi", "cpu", "1"),
			},
		},
		{
			name:      "cpu limit alone is the request",
			res:       kubevirtv1.ResourceRequirements{Requests: list("memory", "1Gi"), Limits: list("cpu", "50m")},
			emulation: true,
			want: corev1.ResourceRequirements{
				Requests: list("memory", "1301Mi", "cpu", "50m"),
				Limits:   list("cpu", "50m"),
			},
		},
		{
			name:      "a TUN device for an interface on the pod network",
			res:       kubevirtv1.ResourceRequirements{Requests: list("memory", "1Gi")},
			network:   true,
			emulation: true,
			want: corev1.ResourceRequirements{
				Requests: list("memory", "1301Mi", "cpu", "100m", TUNResource, "1"),
				Limits:   list(TUNResource, "1"),
			},
		},
		{
			name:      "overcommitGuestOverhead leaves the overhead out of the request only",
			res:       kubevirtv1.ResourceRequirements{Requests: list("memory", "1Gi"), Limits: list("memory", "1Gi"), OvercommitGuestOverhead: true},
			emulation: true,
			want: corev1.ResourceRequirements{
				Requests: list("memory", "1Gi", "cpu", "100m"),
				Limits:   list("memory", "1301Mi"),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Resources: tc.res}}
			if tc.network {
				spec.Domain.Devices.Interfaces = []kubevirtv1.Interface{{Name: "default"}}
				spec.Networks = []kubevirtv1.Network{{Name: "default", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}}}
			}
			got, err := computeResources(spec, tc.emulation, 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultCPURequestFollowsAllocationRatio(t *testing.T) {
	mem := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
	tests := []struct {
		name  string
		cpu   *kubevirtv1.CPU
		res   kubevirtv1.ResourceRequirements
		ratio int
		want  string
	}{
		{name: "no cpu section, ratio 10", ratio: 10, want: "100m"},
		{name: "no cpu section, ratio unset is 10", ratio: 0, want: "100m"},
		{name: "1 vCPU, ratio 10", cpu: &kubevirtv1.CPU{Cores: 1}, ratio: 10, want: "100m"},
		{name: "2 vCPUs, ratio 10", cpu: &kubevirtv1.CPU{Cores: 2}, ratio: 10, want: "200m"},
		{name: "4 vCPUs (2 sockets × 2 threads), ratio 10", cpu: &kubevirtv1.CPU{Sockets: 2, Threads: 2}, ratio: 10, want: "400m"},
		{name: "1 vCPU, ratio 1", cpu: &kubevirtv1.CPU{}, ratio: 1, want: "1"},
		{name: "2 vCPUs, ratio 1", cpu: &kubevirtv1.CPU{Sockets: 2}, ratio: 1, want: "2"},
		{name: "4 vCPUs (2 sockets × 2 cores), ratio 1", cpu: &kubevirtv1.CPU{Sockets: 2, Cores: 2}, ratio: 1, want: "4"},
		{name: "rounded up to whole millicores", cpu: &kubevirtv1.CPU{Cores: 1}, ratio: 3, want: "334m"},
		{name: "an explicit request wins", cpu: &kubevirtv1.CPU{Cores: 4}, ratio: 1,
			res: kubevirtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}, want: "250m"},
		{name: "an explicit limit wins", cpu: &kubevirtv1.CPU{Cores: 4}, ratio: 10,
			res: kubevirtv1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}, want: "3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := *tc.res.DeepCopy()
			if res.Requests == nil {
				res.Requests = corev1.ResourceList{}
			}
			res.Requests[corev1.ResourceMemory] = mem[corev1.ResourceMemory]
			spec := &kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{CPU: tc.cpu, Resources: res}}
			got, err := computeResources(spec, true, tc.ratio)
			if err != nil {
				t.Fatal(err)
			}
			want := resource.MustParse(tc.want)
			if q := got.Requests[corev1.ResourceCPU]; q.Cmp(want) != 0 {
				t.Errorf("cpu request = %s, want %s", q.String(), tc.want)
			}
		})
	}
}
