package migration

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(d time.Duration) *metav1.Time {
	t := metav1.NewTime(testNow.Add(d))
	return &t
}

type migOpt func(*kubevirtv1.VirtualMachineInstanceMigration)

// newMig is migration m1 of instance vm1, as the apiserver stores it (with its finalizer).
func newMig(opts ...migOpt) *kubevirtv1.VirtualMachineInstanceMigration {
	m := &kubevirtv1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "default", UID: "m1-uid", ResourceVersion: "1",
			CreationTimestamp: *at(-2 * time.Minute), Finalizers: []string{kubevirtv1.VirtualMachineInstanceMigrationFinalizer},
			Labels: map[string]string{kubevirtv1.MigrationSelectorLabel: "vm1"}},
		Spec: kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: "vm1"},
	}
	for _, o := range opts {
		o(m)
	}
	return m
}

func phase(p kubevirtv1.VirtualMachineInstanceMigrationPhase) migOpt {
	return func(m *kubevirtv1.VirtualMachineInstanceMigration) {
		m.Status.Phase = p
		m.Status.PhaseTransitionTimestamps = append(m.Status.PhaseTransitionTimestamps,
			kubevirtv1.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{Phase: p, PhaseTransitionTimestamp: *at(-time.Minute)})
	}
}

func migDeleting() migOpt {
	return func(m *kubevirtv1.VirtualMachineInstanceMigration) { m.DeletionTimestamp = at(-time.Second) }
}

func noFinalizer() migOpt {
	return func(m *kubevirtv1.VirtualMachineInstanceMigration) { m.Finalizers = nil }
}

type vmiOpt func(*kubevirtv1.VirtualMachineInstance)

// newVMI is instance vm1, Running on node-a and live-migratable.
func newVMI(opts ...vmiOpt) *kubevirtv1.VirtualMachineInstance {
	vmi := &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "default", UID: "vmi-uid", ResourceVersion: "1",
			Finalizers: []string{kubevirtv1.VirtualMachineControllerFinalizer}},
		Spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Resources: kubevirtv1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: mustQuantity("128Mi")}}}},
		Status: kubevirtv1.VirtualMachineInstanceStatus{
			Phase:    kubevirtv1.Running,
			NodeName: "node-a",
			Conditions: []kubevirtv1.VirtualMachineInstanceCondition{
				{Type: kubevirtv1.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionTrue}},
		},
	}
	for _, o := range opts {
		o(vmi)
	}
	return vmi
}

func vmiPhase(p kubevirtv1.VirtualMachineInstancePhase) vmiOpt {
	return func(v *kubevirtv1.VirtualMachineInstance) { v.Status.Phase = p }
}

func notMigratable() vmiOpt {
	return func(v *kubevirtv1.VirtualMachineInstance) {
		v.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{Type: kubevirtv1.VirtualMachineInstanceIsMigratable,
			Status: corev1.ConditionFalse, Reason: "DisksNotLiveMigratable", Message: "volume data is a claim"}}
	}
}

// handedOff is the migrationState the controller writes at the handoff of m1.
func handedOff() *kubevirtv1.VirtualMachineInstanceMigrationState {
	return &kubevirtv1.VirtualMachineInstanceMigrationState{MigrationUID: "m1-uid", SourceNode: "node-a", SourcePod: "source",
		TargetNode: "node-b", TargetPod: "target", Mode: kubevirtv1.MigrationPreCopy}
}

func state(mutate ...func(*kubevirtv1.VirtualMachineInstanceMigrationState)) vmiOpt {
	return func(v *kubevirtv1.VirtualMachineInstance) {
		ms := handedOff()
		for _, m := range mutate {
			m(ms)
		}
		v.Status.MigrationState = ms
	}
}

func targetReady(ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
	ms.TargetNodeAddress = "10.0.0.2:8186"
}

func transferStarted(ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
	targetReady(ms)
	ms.StartTimestamp = at(-10 * time.Second)
}

func transferDone(ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
	transferStarted(ms)
	ms.Completed = true
	ms.EndTimestamp = at(-5 * time.Second)
}

func domainDetected(ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
	ms.TargetNodeDomainDetected = true
	ms.TargetNodeDomainReadyTimestamp = at(-4 * time.Second)
}

func transferFailed(ms *kubevirtv1.VirtualMachineInstanceMigrationState) {
	transferDone(ms)
	ms.Failed = true
	ms.FailureReason = "migration job failed: connection reset"
}

type podOpt func(*corev1.Pod)

func newPod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), ResourceVersion: "1",
			CreationTimestamp: *at(-30 * time.Second),
			Labels:            map[string]string{kubevirtv1.AppLabel: "virt-launcher", kubevirtv1.CreatedByLabel: "vmi-uid"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance", Name: "vm1",
				UID: "vmi-uid", Controller: boolPtr(true)}}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Image: "launcher:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func boolPtr(b bool) *bool { return &b }

func targetOf(uid string) podOpt {
	return func(p *corev1.Pod) { p.Labels[kubevirtv1.MigrationJobLabel] = uid }
}

func onNode(node string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = node
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
	}
}

func computeUp() podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "compute",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	}
}

func podPhase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func podDeleting() podOpt { return func(p *corev1.Pod) { p.DeletionTimestamp = at(0) } }

func podAge(d time.Duration) podOpt {
	return func(p *corev1.Pod) { p.CreationTimestamp = *at(-d) }
}

func podUnschedulable(msg string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled,
			Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: msg})
	}
}

// source is the instance's running pod on node-a; target is m1's target pod.
func source(opts ...podOpt) *corev1.Pod {
	return newPod("source", append([]podOpt{onNode("node-a"), computeUp(), podAge(time.Hour)}, opts...)...)
}

func target(opts ...podOpt) *corev1.Pod {
	return newPod("target", append([]podOpt{targetOf("m1-uid")}, opts...)...)
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
