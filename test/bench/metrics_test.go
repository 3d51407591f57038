package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testMetrics = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachines",scope="resource",subresource="",verb="POST",version="v1"} 10
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachineinstances",scope="resource",subresource="status",verb="PUT",version="v1"} 4
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachineinstances",scope="resource",subresource="status",verb="PATCH",version="v1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachines",scope="namespace",subresource="",verb="LIST",version="v1"} 99
apiserver_request_total{code="200",group="",resource="pods",subresource="",verb="POST",version="v1"} 7
process_resident_memory_bytes 1.2345e+08
weird{msg="a \"quoted\" value, with {braces}"} 1 1700000000000
`

func TestParseMetrics(t *testing.T) {
	samples, err := ParseMetrics([]byte(testMetrics))
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 7 {
		t.Fatalf("%d samples, want 7", len(samples))
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"writes per kubevirt.io resource", WritesByResource(samples, "kubevirt.io"),
			map[string]float64{"virtualmachines": 10, "virtualmachineinstances/status": 6}},
		{"writes per core resource", WritesByResource(samples, ""), map[string]float64{"pods": 7}},
		{"requests by verb for VMs", SumBy(samples, "apiserver_request_total", map[string]string{"resource": "virtualmachines"}, "verb"),
			map[string]float64{"POST": 10, "LIST": 99}},
		{"unlabelled gauge", SumBy(samples, "process_resident_memory_bytes", nil, ""), map[string]float64{"": 1.2345e8}},
		{"escaped label value", samples[6].Labels["msg"], `a "quoted" value, with {braces}`},
		{"delta", Delta(map[string]float64{"a": 1, "b": 2}, map[string]float64{"a": 4, "c": 1}),
			map[string]float64{"a": 3, "b": -2, "c": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMetricsErrors(t *testing.T) {
	for _, bad := range []string{"novalue", `x{a="b"`, `x{a="b"} notanumber`, `x{a} 1`} {
		if _, err := ParseMetrics([]byte(bad)); err == nil {
			t.Errorf("ParseMetrics(%q): want an error", bad)
		}
	}
}
