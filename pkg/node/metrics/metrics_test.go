package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/nativevirt/nativevirt/pkg/node/agent"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

func u64(v uint64) *uint64 { return &v }

// tokens authenticates "Bearer prometheus" and "Bearer someone".
var tokens = authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
	name, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || (name != "prometheus" && name != "someone") {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: name}}, true, nil
})

// onlyPrometheus allows prometheus to get /metrics, and nothing else.
var onlyPrometheus = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() == "prometheus" && a.GetVerb() == "get" && a.GetPath() == "/metrics" && !a.IsResourceRequest() {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "no rule", nil
})

func scrape(t *testing.T, h http.Handler, path, token string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

// TestMetricsOfVMIs: the node's domain statistics become KubeVirt's kubevirt_vmi_* metrics,
// labelled with the node, the VMI and its interface or disk; counters libvirt did not report are
// left out rather than reported as 0.
func TestMetricsOfVMIs(t *testing.T) {
	source := func(context.Context) []agent.VMIStats {
		return []agent.VMIStats{{Namespace: "ns1", Name: "vm-a", Stats: virt.DomainStats{
			CPUTime: u64(2_500_000_000), CPUUser: u64(1_000_000_000),
			VCPUTime:   map[int]uint64{0: 1_500_000_000},
			Memory:     virt.MemoryStats{Maximum: u64(128 << 20), RSS: u64(90 << 20)},
			Interfaces: map[string]virt.InterfaceStats{"default": {RxBytes: 1234, TxPackets: 7}},
			Disks:      map[string]virt.DiskStats{"containerdisk": {ReadBytes: 4096, ReadRequests: 2, ReadTime: 3_000_000}},
		}}}
	}
	h := Handler(NewCollector("node-1", source), tokens, onlyPrometheus)
	code, body := scrape(t, h, "/metrics", "prometheus")
	if code != http.StatusOK {
		t.Fatalf("scrape: %d %s", code, body)
	}
	ids := `name="vm-a",namespace="ns1",node="node-1"`
	for _, want := range []string{
		`kubevirt_vmi_cpu_usage_seconds_total{` + ids + `} 2.5`,
		`kubevirt_vmi_cpu_user_usage_seconds_total{` + ids + `} 1`,
		`kubevirt_vmi_vcpu_seconds_total{id="0",` + ids + `,state="running"} 1.5`,
		`kubevirt_vmi_memory_domain_bytes{` + ids + `} 1.34217728e+08`,
		`kubevirt_vmi_memory_resident_bytes{` + ids + `} 9.437184e+07`,
		`kubevirt_vmi_network_receive_bytes_total{interface="default",` + ids + `} 1234`,
		`kubevirt_vmi_network_transmit_packets_total{interface="default",` + ids + `} 7`,
		`kubevirt_vmi_storage_read_traffic_bytes_total{drive="containerdisk",` + ids + `} 4096`,
		`kubevirt_vmi_storage_iops_read_total{drive="containerdisk",` + ids + `} 2`,
		`kubevirt_vmi_storage_read_times_seconds_total{drive="containerdisk",` + ids + `} 0.003`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no line %q in:\n%s", want, body)
		}
	}
	for _, absent := range []string{"kubevirt_vmi_cpu_system_usage_seconds_total{", "kubevirt_vmi_memory_available_bytes{"} {
		if strings.Contains(body, absent) {
			t.Errorf("%s reported although libvirt gave no value", absent)
		}
	}
}

// TestMetricsNeedAuthorization: no token is 401, a token without the right to get /metrics
// 403, another path 404.
func TestMetricsNeedAuthorization(t *testing.T) {
	h := Handler(NewCollector("node-1", func(context.Context) []agent.VMIStats { return nil }), tokens, onlyPrometheus)
	for _, tc := range []struct {
		path, token string
		want        int
	}{
		{"/metrics", "", http.StatusUnauthorized},
		{"/metrics", "forged", http.StatusUnauthorized},
		{"/metrics", "someone", http.StatusForbidden},
		{"/metrics", "prometheus", http.StatusOK},
		{"/other", "prometheus", http.StatusNotFound},
	} {
		if code, body := scrape(t, h, tc.path, tc.token); code != tc.want {
			t.Errorf("GET %s as %q: %d %s, want %d", tc.path, tc.token, code, body, tc.want)
		}
	}
}
