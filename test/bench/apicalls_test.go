package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestCallsByVerbResource(t *testing.T) {
	samples, err := ParseMetrics([]byte(testMetrics + `apiserver_request_total{code="200",group="kubevirt.io",resource="virtualmachineinstances",subresource="",verb="WATCH",version="v1"} 5
apiserver_request_total{code="409",group="kubevirt.io",resource="virtualmachineinstances",subresource="status",verb="PUT",version="v1"} 1
`))
	if err != nil {
		t.Fatal(err)
	}
	got := CallsByVerbResource(samples, "kubevirt.io")
	want := map[string]float64{
		"POST virtualmachines":                 10,
		"PUT virtualmachineinstances/status":   5, // every code counts
		"PATCH virtualmachineinstances/status": 2,
		"LIST virtualmachines":                 99,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubevirt.io calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"POST pods": 7}, CallsByVerbResource(samples, "")); diff != "" {
		t.Errorf("core calls (-want +got):\n%s", diff)
	}
	if w := WritesTo(got, "virtualmachineinstances"); w != 7 {
		t.Errorf("writes to VMIs = %v, want 7 (PUT and PATCH of the status subresource)", w)
	}
	if w := WritesTo(got, "virtualmachines", "virtualmachineinstances"); w != 17 {
		t.Errorf("writes to VMs and VMIs = %v, want 17 (LIST is no write)", w)
	}
	if s := FmtCalls(got, 10); s != "LIST virtualmachines 9.9, POST virtualmachines 1.0, PUT virtualmachineinstances/status 0.5, PATCH virtualmachineinstances/status 0.2" {
		t.Errorf("FmtCalls = %q", s)
	}
}

func TestWithFlag(t *testing.T) {
	in := []string{"--workers=5", "--cpu-allocation-ratio=10", "--use-emulation"}
	got := withFlag(in, "cpu-allocation-ratio", "100")
	if diff := cmp.Diff([]string{"--workers=5", "--use-emulation", "--cpu-allocation-ratio=100"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if in[1] != "--cpu-allocation-ratio=10" {
		t.Error("withFlag changed its input")
	}
	if diff := cmp.Diff([]string{"--a=1", "--b=2"}, withFlag([]string{"--a=1"}, "b", "2")); diff != "" {
		t.Errorf("appended (-want +got):\n%s", diff)
	}
}

func TestDensityObjects(t *testing.T) {
	vmi, err := densityVMI("ns", "vmi-001")
	if err != nil {
		t.Fatal(err)
	}
	if vmi.GetKind() != "VirtualMachineInstance" || vmi.GetName() != "vmi-001" || vmi.GetNamespace() != "ns" {
		t.Errorf("VMI %s %s/%s", vmi.GetKind(), vmi.GetNamespace(), vmi.GetName())
	}
	if s, _, _ := unstructured.NestedString(vmi.Object, "spec", "startStrategy"); s != "Paused" {
		t.Errorf("VMI startStrategy %q, want Paused", s)
	}
	if _, found, _ := unstructured.NestedMap(vmi.Object, "spec", "domain", "resources"); found {
		t.Error("VMI requests CPU itself; the controller's ratio must set it")
	}
	if _, found, _ := unstructured.NestedSlice(vmi.Object, "spec", "volumes"); !found {
		t.Error("VMI lost its volumes")
	}
	vm, err := densityVM("ns", "vm-001")
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := unstructured.NestedString(vm.Object, "spec", "template", "spec", "startStrategy"); s != "Paused" {
		t.Errorf("VM startStrategy %q, want Paused", s)
	}
}
