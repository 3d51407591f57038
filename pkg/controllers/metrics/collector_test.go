package metrics

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	listers "github.com/nativevirt/nativevirt/pkg/client/listers/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/metricsserver/metricstest"
)

// TestPhaseCountAndVMInfo: VMIs are counted per node, phase and KubeVirt's labels; each VM is
// one kubevirt_vm_info sample with its status and status group. A replica without caches (not
// leading) reports nothing.
func TestPhaseCountAndVMInfo(t *testing.T) {
	vmis := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	vms := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, v := range []*kubevirtv1.VirtualMachineInstance{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "one", Annotations: map[string]string{"vm.kubevirt.io/os": "fedora"}},
			Status: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "n1",
				GuestOSInfo: kubevirtv1.VirtualMachineInstanceGuestOSInfo{Name: "Fedora", KernelRelease: "6.5", Machine: "x86_64", VersionID: "39"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "two"}, Status: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "three"}, Status: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running, NodeName: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "four"}, Status: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Pending}},
	} {
		if err := vmis.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := vms.Add(&kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "vm1"},
		Status: kubevirtv1.VirtualMachineStatus{PrintableStatus: kubevirtv1.VirtualMachineStatusUnschedulable}}); err != nil {
		t.Fatal(err)
	}
	c := &Collector{}
	h := metricstest.Handler(c)
	if body := metricstest.Scrape(t, h); strings.Contains(body, "kubevirt_vmi_phase_count{") {
		t.Errorf("samples from a replica without caches:\n%s", body)
	}
	c.Use(&Listers{VMs: listers.NewVirtualMachineLister(vms), VMIs: listers.NewVirtualMachineInstanceLister(vmis)})
	body := metricstest.Scrape(t, h)
	for _, want := range []string{
		`kubevirt_vmi_phase_count{flavor="<none>",guest_os_kernel_release="6.5",guest_os_machine="x86_64",guest_os_name="Fedora",guest_os_version_id="39",instance_type="<none>",node="n1",os="fedora",phase="running",preference="<none>",workload="<none>"} 1`,
		`kubevirt_vmi_phase_count{flavor="<none>",guest_os_kernel_release="<none>",guest_os_machine="<none>",guest_os_name="<none>",guest_os_version_id="<none>",instance_type="<none>",node="n1",os="<none>",phase="running",preference="<none>",workload="<none>"} 2`,
		`kubevirt_vmi_phase_count{flavor="<none>",guest_os_kernel_release="<none>",guest_os_machine="<none>",guest_os_name="<none>",guest_os_version_id="<none>",instance_type="<none>",node="<none>",os="<none>",phase="pending",preference="<none>",workload="<none>"} 1`,
		`kubevirt_vm_info{flavor="<none>",instance_type="<none>",name="vm1",namespace="a",os="<none>",preference="<none>",status="errorunschedulable",status_group="error",workload="<none>"} 1`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no line %s in:\n%s", want, body)
		}
	}
}
