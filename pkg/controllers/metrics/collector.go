// Package metrics collects the cluster-wide VM and VMI metrics that KubeVirt's virt-controller
// exports (kubevirt_vmi_phase_count, kubevirt_vm_info) from the controllers' informer caches.
// Only the leading replica has caches; the others report nothing, as only KubeVirt's leader
// does.
package metrics

import (
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-base/metrics"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	listers "github.com/nativevirt/nativevirt/pkg/client/listers/kubevirt/v1"
)

// none is the value of a label that has none (KubeVirt's).
const none = "<none>"

// Annotations and labels KubeVirt's metrics read from instances and VMs.
const (
	osAnnotation       = "vm.kubevirt.io/os"
	workloadAnnotation = "vm.kubevirt.io/workload"
	flavorAnnotation   = "vm.kubevirt.io/flavor"
	instancetypeLabel  = "kubevirt.io/instancetype-name"
	clusterTypeLabel   = "kubevirt.io/cluster-instancetype-name"
	preferenceLabel    = "kubevirt.io/preference-name"
	clusterPrefLabel   = "kubevirt.io/cluster-preference-name"
)

var (
	phaseCount = metrics.NewDesc("kubevirt_vmi_phase_count", "Sum of VMIs per phase and node.",
		[]string{"node", "phase", "os", "workload", "flavor", "instance_type", "preference",
			"guest_os_kernel_release", "guest_os_machine", "guest_os_name", "guest_os_version_id"}, nil, metrics.ALPHA, "")
	vmInfo = metrics.NewDesc("kubevirt_vm_info", "Information about Virtual Machines.",
		[]string{"name", "namespace", "os", "workload", "flavor", "instance_type", "preference", "status", "status_group"}, nil, metrics.ALPHA, "")
)

// Listers are the caches the metrics come from.
type Listers struct {
	VMs  listers.VirtualMachineLister
	VMIs listers.VirtualMachineInstanceLister
}

// Collector reports the VMs and VMIs of the caches it is given while they are (Use).
type Collector struct {
	metrics.BaseStableCollector
	listers atomic.Pointer[Listers]
}

var _ metrics.StableCollector = &Collector{}

// Use makes the collector read l; nil stops it (the replica no longer leads).
func (c *Collector) Use(l *Listers) { c.listers.Store(l) }

// DescribeWithStability implements metrics.StableCollector.
func (c *Collector) DescribeWithStability(ch chan<- *metrics.Desc) {
	ch <- phaseCount
	ch <- vmInfo
}

// CollectWithStability implements metrics.StableCollector.
func (c *Collector) CollectWithStability(ch chan<- metrics.Metric) {
	l := c.listers.Load()
	if l == nil {
		return
	}
	if vmis, err := l.VMIs.List(labels.Everything()); err == nil {
		counts := map[[11]string]float64{}
		for _, v := range vmis {
			os := v.Status.GuestOSInfo
			counts[[11]string{orNone(v.Status.NodeName), strings.ToLower(string(v.Status.Phase)),
				annotation(v.Annotations, osAnnotation), annotation(v.Annotations, workloadAnnotation), annotation(v.Annotations, flavorAnnotation),
				either(v.Labels, instancetypeLabel, clusterTypeLabel), either(v.Labels, preferenceLabel, clusterPrefLabel),
				orNone(os.KernelRelease), orNone(os.Machine), orNone(os.Name), orNone(os.VersionID)}]++
		}
		for k, n := range counts {
			ch <- metrics.NewLazyConstMetric(phaseCount, metrics.GaugeValue, n, k[:]...)
		}
	}
	if vms, err := l.VMs.List(labels.Everything()); err == nil {
		for _, vm := range vms {
			var ann map[string]string
			if vm.Spec.Template != nil {
				ann = vm.Spec.Template.ObjectMeta.Annotations
			}
			status := vm.Status.PrintableStatus
			ch <- metrics.NewLazyConstMetric(vmInfo, metrics.GaugeValue, 1, vm.Name, vm.Namespace,
				annotation(ann, osAnnotation), annotation(ann, workloadAnnotation), annotation(ann, flavorAnnotation),
				either(vm.Labels, instancetypeLabel, clusterTypeLabel), either(vm.Labels, preferenceLabel, clusterPrefLabel),
				strings.ToLower(orNone(string(status))), statusGroup(status))
		}
	}
}

// statusGroup sorts a VM's printable status as KubeVirt's metrics do.
func statusGroup(s kubevirtv1.VirtualMachinePrintableStatus) string {
	switch s {
	case kubevirtv1.VirtualMachineStatusRunning:
		return "running"
	case kubevirtv1.VirtualMachineStatusStopped, kubevirtv1.VirtualMachineStatusPaused, kubevirtv1.VirtualMachineStatusStopping,
		kubevirtv1.VirtualMachineStatusTerminating, kubevirtv1.VirtualMachineStatusWaitingForReceiver:
		return "non_running"
	case kubevirtv1.VirtualMachineStatusStarting, kubevirtv1.VirtualMachineStatusProvisioning, kubevirtv1.VirtualMachineStatusWaitingForVolumeBinding:
		return "starting"
	case kubevirtv1.VirtualMachineStatusMigrating:
		return "migrating"
	case "":
		return none
	}
	return "error"
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

func annotation(m map[string]string, key string) string { return orNone(m[key]) }

// either is the value of the first of two labels that is set.
func either(m map[string]string, a, b string) string {
	if v := m[a]; v != "" {
		return v
	}
	return orNone(m[b])
}
