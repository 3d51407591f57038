// Package metrics collects the VMIs of a node as Prometheus metrics with KubeVirt's names
// (kubevirt_vmi_*, from libvirt's domain statistics), which the node agent serves through
// package metricsserver.
package metrics

import (
	"context"
	"strconv"
	"time"

	"k8s.io/component-base/metrics"

	"github.com/nativevirt/nativevirt/pkg/node/agent"
)

// Source lists the counters of the VMIs running on the node.
type Source func(ctx context.Context) []agent.VMIStats

// scrapeTimeout bounds the libvirt calls of one scrape.
const scrapeTimeout = 10 * time.Second

// vmiLabels label every metric, as KubeVirt's virt-handler does.
var vmiLabels = []string{"node", "namespace", "name"}

func desc(name, help string, extra ...string) *metrics.Desc {
	return metrics.NewDesc(name, help, append(append([]string(nil), vmiLabels...), extra...), nil, metrics.ALPHA, "")
}

var (
	cpuUsage   = desc("kubevirt_vmi_cpu_usage_seconds_total", "Total CPU time spent in all modes (vCPUs and hypervisor).")
	cpuUser    = desc("kubevirt_vmi_cpu_user_usage_seconds_total", "Total CPU time spent in user mode.")
	cpuSystem  = desc("kubevirt_vmi_cpu_system_usage_seconds_total", "Total CPU time spent in system mode.")
	vcpuTime   = desc("kubevirt_vmi_vcpu_seconds_total", "Total amount of time each vCPU spent in each state.", "id", "state")
	memDomain  = desc("kubevirt_vmi_memory_domain_bytes", "The amount of memory in bytes allocated to the domain.")
	memBalloon = desc("kubevirt_vmi_memory_actual_balloon_bytes", "Current balloon size in bytes.")
	memRSS     = desc("kubevirt_vmi_memory_resident_bytes", "Resident set size of the process running the domain.")
	memAvail   = desc("kubevirt_vmi_memory_available_bytes", "Amount of usable memory as seen by the domain.")
	memUnused  = desc("kubevirt_vmi_memory_unused_bytes", "The amount of memory left completely unused by the system.")
	memUsable  = desc("kubevirt_vmi_memory_usable_bytes", "The amount of memory which can be reclaimed by balloon without pushing the guest system to swap.")

	netRxBytes   = desc("kubevirt_vmi_network_receive_bytes_total", "Total network traffic received in bytes.", "interface")
	netTxBytes   = desc("kubevirt_vmi_network_transmit_bytes_total", "Total network traffic transmitted in bytes.", "interface")
	netRxPackets = desc("kubevirt_vmi_network_receive_packets_total", "Total network traffic received packets.", "interface")
	netTxPackets = desc("kubevirt_vmi_network_transmit_packets_total", "Total network traffic transmitted packets.", "interface")
	netRxErrors  = desc("kubevirt_vmi_network_receive_errors_total", "Total network received error packets.", "interface")
	netTxErrors  = desc("kubevirt_vmi_network_transmit_errors_total", "Total network transmitted error packets.", "interface")
	netRxDropped = desc("kubevirt_vmi_network_receive_packets_dropped_total", "The total number of rx packets dropped on vNIC interfaces.", "interface")
	netTxDropped = desc("kubevirt_vmi_network_transmit_packets_dropped_total", "The total number of tx packets dropped on vNIC interfaces.", "interface")

	diskReadBytes  = desc("kubevirt_vmi_storage_read_traffic_bytes_total", "Total number of bytes read from storage.", "drive")
	diskWriteBytes = desc("kubevirt_vmi_storage_write_traffic_bytes_total", "Total number of written bytes.", "drive")
	diskReadOps    = desc("kubevirt_vmi_storage_iops_read_total", "Total number of I/O read operations.", "drive")
	diskWriteOps   = desc("kubevirt_vmi_storage_iops_write_total", "Total number of I/O write operations.", "drive")
	diskReadTime   = desc("kubevirt_vmi_storage_read_times_seconds_total", "Total time spent on read operations.", "drive")
	diskWriteTime  = desc("kubevirt_vmi_storage_write_times_seconds_total", "Total time spent on write operations.", "drive")
	diskFlushOps   = desc("kubevirt_vmi_storage_flush_requests_total", "Total storage flush requests.", "drive")
	diskFlushTime  = desc("kubevirt_vmi_storage_flush_times_seconds_total", "Total time spent on cache flushing.", "drive")
)

var allDescs = []*metrics.Desc{cpuUsage, cpuUser, cpuSystem, vcpuTime, memDomain, memBalloon, memRSS, memAvail, memUnused, memUsable,
	netRxBytes, netTxBytes, netRxPackets, netTxPackets, netRxErrors, netTxErrors, netRxDropped, netTxDropped,
	diskReadBytes, diskWriteBytes, diskReadOps, diskWriteOps, diskReadTime, diskWriteTime, diskFlushOps, diskFlushTime}

// Collector turns the node's domain statistics into metrics at each scrape.
type Collector struct {
	metrics.BaseStableCollector
	node   string
	source Source
}

var _ metrics.StableCollector = &Collector{}

// NewCollector collects the VMIs of node from source.
func NewCollector(node string, source Source) *Collector {
	return &Collector{node: node, source: source}
}

// DescribeWithStability implements metrics.StableCollector.
func (c *Collector) DescribeWithStability(ch chan<- *metrics.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// CollectWithStability implements metrics.StableCollector.
func (c *Collector) CollectWithStability(ch chan<- metrics.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	const ns = 1e9
	for _, v := range c.source(ctx) {
		ids := []string{c.node, v.Namespace, v.Name}
		emit := func(d *metrics.Desc, t metrics.ValueType, value float64, extra ...string) {
			ch <- metrics.NewLazyConstMetric(d, t, value, append(append([]string(nil), ids...), extra...)...)
		}
		optional := func(d *metrics.Desc, t metrics.ValueType, value *uint64, scale float64) {
			if value != nil {
				emit(d, t, float64(*value)/scale)
			}
		}
		s := v.Stats
		optional(cpuUsage, metrics.CounterValue, s.CPUTime, ns)
		optional(cpuUser, metrics.CounterValue, s.CPUUser, ns)
		optional(cpuSystem, metrics.CounterValue, s.CPUSystem, ns)
		for id, t := range s.VCPUTime {
			emit(vcpuTime, metrics.CounterValue, float64(t)/ns, strconv.Itoa(id), "running")
		}
		optional(memDomain, metrics.GaugeValue, s.Memory.Maximum, 1)
		optional(memBalloon, metrics.GaugeValue, s.Memory.Current, 1)
		optional(memRSS, metrics.GaugeValue, s.Memory.RSS, 1)
		optional(memAvail, metrics.GaugeValue, s.Memory.Available, 1)
		optional(memUnused, metrics.GaugeValue, s.Memory.Unused, 1)
		optional(memUsable, metrics.GaugeValue, s.Memory.Usable, 1)
		for name, n := range s.Interfaces {
			for d, value := range map[*metrics.Desc]uint64{
				netRxBytes: n.RxBytes, netTxBytes: n.TxBytes, netRxPackets: n.RxPackets, netTxPackets: n.TxPackets,
				netRxErrors: n.RxErrors, netTxErrors: n.TxErrors, netRxDropped: n.RxDropped, netTxDropped: n.TxDropped,
			} {
				emit(d, metrics.CounterValue, float64(value), name)
			}
		}
		for name, b := range s.Disks {
			for d, value := range map[*metrics.Desc]float64{
				diskReadBytes: float64(b.ReadBytes), diskWriteBytes: float64(b.WriteBytes),
				diskReadOps: float64(b.ReadRequests), diskWriteOps: float64(b.WriteRequests), diskFlushOps: float64(b.FlushRequests),
				diskReadTime: float64(b.ReadTime) / ns, diskWriteTime: float64(b.WriteTime) / ns, diskFlushTime: float64(b.FlushTime) / ns,
			} {
				emit(d, metrics.CounterValue, value, name)
			}
		}
	}
}
