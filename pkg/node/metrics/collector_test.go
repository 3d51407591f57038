package metrics

import (
	"context"
	"strings"
	"testing"

	"github.com/nativevirt/nativevirt/pkg/metricsserver/metricstest"
	"github.com/nativevirt/nativevirt/pkg/node/agent"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

func u64(v uint64) *uint64 { return &v }

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
	body := metricstest.Scrape(t, metricstest.Handler(NewCollector("node-1", source)))
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
