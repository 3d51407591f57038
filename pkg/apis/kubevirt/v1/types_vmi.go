package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VirtualMachineInstance is one running (or about to run) virtual machine.
// It lives exactly as long as its guest: once the guest stops, the instance
// reaches a final phase and is not restarted. A VirtualMachine owns and
// recreates instances when a persistent VM is wanted.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstance struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired guest: its virtual hardware, volumes, networks and scheduling.
	Spec VirtualMachineInstanceSpec `json:"spec"`
	// Status is the observed state of the guest, written by NativeVirt.
	// +optional
	Status VirtualMachineInstanceStatus `json:"status,omitempty"`
}

// VirtualMachineInstanceList is a list of VirtualMachineInstances.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the VirtualMachineInstances of the list.
	Items []VirtualMachineInstance `json:"items"`
}

// EvictionStrategy says what happens to a guest when its node is drained.
type EvictionStrategy string

// Eviction strategies.
const (
	// EvictionStrategyNone lets the guest be shut down on eviction.
	EvictionStrategyNone EvictionStrategy = "None"
	// EvictionStrategyLiveMigrate blocks eviction until the guest is live-migrated away.
	EvictionStrategyLiveMigrate EvictionStrategy = "LiveMigrate"
	// EvictionStrategyLiveMigrateIfPossible migrates when the guest can be migrated and shuts it down otherwise.
	EvictionStrategyLiveMigrateIfPossible EvictionStrategy = "LiveMigrateIfPossible"
	// EvictionStrategyExternal blocks eviction and leaves the decision to an external controller.
	EvictionStrategyExternal EvictionStrategy = "External"
)

// StartStrategy says how a guest starts.
type StartStrategy string

// Start strategies.
const (
	// StartStrategyPaused starts the guest with its vCPUs paused.
	StartStrategyPaused StartStrategy = "Paused"
)

// VirtualMachineInstanceSpec describes the guest to run.
type VirtualMachineInstanceSpec struct {
	// PriorityClassName gives the launcher pod this priority class.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// Domain is the virtual hardware of the guest.
	Domain DomainSpec `json:"domain"`
	// NodeSelector restricts the nodes the guest may run on, as a pod's nodeSelector does.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Affinity holds node and pod (anti-)affinity rules for the launcher pod.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// SchedulerName names the Kubernetes scheduler that places the launcher pod; empty means the default scheduler.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// Tolerations let the launcher pod be scheduled onto tainted nodes.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// TopologySpreadConstraints spread launcher pods across topology domains, as for pods.
	// +optional
	// +patchMergeKey=topologyKey
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=topologyKey
	// +listMapKey=whenUnsatisfiable
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty" patchStrategy:"merge" patchMergeKey:"topologyKey"`
	// EvictionStrategy says what happens to the guest when its node is drained:
	// None, LiveMigrate, LiveMigrateIfPossible or External.
	// +optional
	EvictionStrategy *EvictionStrategy `json:"evictionStrategy,omitempty"`
	// StartStrategy set to Paused starts the guest with paused vCPUs.
	// +optional
	StartStrategy *StartStrategy `json:"startStrategy,omitempty"`
	// TerminationGracePeriodSeconds is how long the guest gets to shut down
	// cleanly before it is powered off. Zero powers it off at once.
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// Volumes are the sources of the guest's disks and filesystems; each is
	// referenced by name from a disk or filesystem.
	// +optional
	// +patchMergeKey=name
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=name
	Volumes []Volume `json:"volumes,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	// LivenessProbe restarts the guest when it fails.
	// +optional
	LivenessProbe *Probe `json:"livenessProbe,omitempty"`
	// ReadinessProbe decides whether the guest counts as ready (and receives
	// service traffic).
	// +optional
	ReadinessProbe *Probe `json:"readinessProbe,omitempty"`
	// Hostname is the guest's host name; defaults to the object's name.
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// Subdomain makes the guest resolvable as <hostname>.<subdomain>.<namespace>.svc
	// when a headless Service of that name exists.
	// +optional
	Subdomain string `json:"subdomain,omitempty"`
	// Networks are the networks the guest's interfaces attach to; each is
	// referenced by name from an interface.
	// +optional
	// +patchMergeKey=name
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=name
	Networks []Network `json:"networks,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	// DNSPolicy is the launcher pod's DNS policy, as for pods.
	// +optional
	DNSPolicy corev1.DNSPolicy `json:"dnsPolicy,omitempty"`
	// DNSConfig adds DNS parameters to the launcher pod, as for pods.
	// +optional
	DNSConfig *corev1.PodDNSConfig `json:"dnsConfig,omitempty"`
	// AccessCredentials inject SSH keys or passwords into the guest.
	// +optional
	// +listType=atomic
	AccessCredentials []AccessCredential `json:"accessCredentials,omitempty"`
	// Architecture is the guest's CPU architecture (amd64, arm64, s390x);
	// empty means the cluster's default.
	// +optional
	Architecture string `json:"architecture,omitempty"`
	// ResourceClaims are dynamic resource allocation claims for the launcher pod.
	// +optional
	// +listType=map
	// +listMapKey=name
	ResourceClaims []corev1.PodResourceClaim `json:"resourceClaims,omitempty"`
}

// VirtualMachineInstanceTemplateSpec is the template from which
// VirtualMachines and replica sets create instances.
type VirtualMachineInstanceTemplateSpec struct {
	// Metadata given to each instance created from the template (labels, annotations).
	// +optional
	ObjectMeta metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec of each instance created from the template.
	// +optional
	Spec VirtualMachineInstanceSpec `json:"spec,omitempty"`
}

// Handler is the action a probe runs: exactly one member is set.
type Handler struct {
	// Exec runs a command in the guest through the guest agent; exit status 0 is success.
	// +optional
	Exec *corev1.ExecAction `json:"exec,omitempty"`
	// GuestAgentPing succeeds when the guest agent answers.
	// +optional
	GuestAgentPing *GuestAgentPing `json:"guestAgentPing,omitempty"`
	// HTTPGet succeeds on an HTTP status from 200 to 399.
	// +optional
	HTTPGet *corev1.HTTPGetAction `json:"httpGet,omitempty"`
	// TCPSocket succeeds when a TCP connection opens.
	// +optional
	TCPSocket *corev1.TCPSocketAction `json:"tcpSocket,omitempty"`
}

// GuestAgentPing is a probe action that pings the guest agent.
type GuestAgentPing struct{}

// Probe checks the health of the guest periodically.
type Probe struct {
	// Handler is the check to run.
	Handler `json:",inline"`
	// InitialDelaySeconds waits this long after start before the first probe.
	// +optional
	InitialDelaySeconds int32 `json:"initialDelaySeconds,omitempty"`
	// TimeoutSeconds bounds one probe. Default 1, minimum 1.
	// +optional
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
	// PeriodSeconds is the interval between probes. Default 10, minimum 1.
	// +optional
	PeriodSeconds int32 `json:"periodSeconds,omitempty"`
	// SuccessThreshold is how many consecutive successes count as healthy after a failure. Default 1.
	// +optional
	SuccessThreshold int32 `json:"successThreshold,omitempty"`
	// FailureThreshold is how many consecutive failures count as unhealthy. Default 3.
	// +optional
	FailureThreshold int32 `json:"failureThreshold,omitempty"`
}
