package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// VirtualMachineInstancetype is a namespaced instance type: the resources and CPU of the
// VirtualMachines of its namespace that reference it.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstancetype struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is what the instance type gives a VirtualMachine.
	Spec VirtualMachineInstancetypeSpec `json:"spec"`
}

// VirtualMachineInstancetypeList is a list of VirtualMachineInstancetypes.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstancetypeList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the instance types of the list.
	Items []VirtualMachineInstancetype `json:"items"`
}

// VirtualMachineClusterInstancetype is a cluster-wide instance type, usable by VirtualMachines of
// every namespace.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineClusterInstancetype struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is what the instance type gives a VirtualMachine.
	Spec VirtualMachineInstancetypeSpec `json:"spec"`
}

// VirtualMachineClusterInstancetypeList is a list of VirtualMachineClusterInstancetypes.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineClusterInstancetypeList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the cluster instance types of the list.
	Items []VirtualMachineClusterInstancetype `json:"items"`
}

// VirtualMachineInstancetypeSpec is what an instance type sets in the instance a VirtualMachine
// creates. A VirtualMachine that references it may not set the same fields itself.
type VirtualMachineInstancetypeSpec struct {
	// NodeSelector is added to the instance's node selector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// SchedulerName is the scheduler of the instance's pod.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// CPU is the guest's vCPU count and CPU settings.
	CPU CPUInstancetype `json:"cpu"`
	// Memory is the guest's memory.
	Memory MemoryInstancetype `json:"memory"`
	// GPUs passed through to the guest.
	// +optional
	// +listType=atomic
	GPUs []kubevirtv1.GPU `json:"gpus,omitempty"`
	// HostDevices passed through to the guest.
	// +optional
	// +listType=atomic
	HostDevices []kubevirtv1.HostDevice `json:"hostDevices,omitempty"`
	// IOThreadsPolicy is the domain's IO threads policy (shared or auto).
	// +optional
	IOThreadsPolicy *kubevirtv1.IOThreadsPolicy `json:"ioThreadsPolicy,omitempty"`
	// IOThreads configures the IO threads of the disks.
	// +optional
	IOThreads *kubevirtv1.DiskIOThreads `json:"ioThreads,omitempty"`
	// LaunchSecurity is the confidential computing configuration.
	// +optional
	LaunchSecurity *kubevirtv1.LaunchSecurity `json:"launchSecurity,omitempty"`
	// Annotations are added to the instance (an annotation the VirtualMachine sets itself wins).
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// CPUInstancetype is the CPU an instance type gives.
type CPUInstancetype struct {
	// Guest is the number of vCPUs; the preference's preferred topology decides how they are
	// laid out in sockets, cores and threads.
	Guest int32 `json:"guest"`
	// Model is the guest's CPU model (host-model, host-passthrough or a named model).
	// +optional
	Model *string `json:"model,omitempty"`
	// DedicatedCPUPlacement pins the vCPUs to dedicated host CPUs.
	// +optional
	DedicatedCPUPlacement *bool `json:"dedicatedCPUPlacement,omitempty"`
	// NUMA is the guest's NUMA topology.
	// +optional
	NUMA *kubevirtv1.NUMA `json:"numa,omitempty"`
	// IsolateEmulatorThread gives QEMU's emulator thread a host CPU of its own.
	// +optional
	IsolateEmulatorThread *bool `json:"isolateEmulatorThread,omitempty"`
	// Realtime tunes the guest for realtime work.
	// +optional
	Realtime *kubevirtv1.Realtime `json:"realtime,omitempty"`
	// MaxSockets is the highest socket count CPU hotplug may reach.
	// +optional
	MaxSockets *int32 `json:"maxSockets,omitempty"`
}

// MemoryInstancetype is the memory an instance type gives.
type MemoryInstancetype struct {
	// Guest is the memory the guest sees.
	Guest resource.Quantity `json:"guest"`
	// Hugepages backs the guest's memory with huge pages.
	// +optional
	Hugepages *kubevirtv1.Hugepages `json:"hugepages,omitempty"`
	// OvercommitPercent lowers the pod's memory request below the guest's memory by this many
	// percent (0 to 100).
	// +optional
	OvercommitPercent int32 `json:"overcommitPercent,omitempty"`
	// MaxGuest is the most memory hotplug may give the guest.
	// +optional
	MaxGuest *resource.Quantity `json:"maxGuest,omitempty"`
}
