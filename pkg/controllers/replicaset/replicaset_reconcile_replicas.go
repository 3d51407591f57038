package replicaset

import (
	"context"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/expectations"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/ownerref"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/vmis"
)

// burst caps the creations or deletions of one sync, so that one replica set scaled to
// thousands cannot flood the apiserver; the next sync continues.
const burst = 10

// Event reasons of the replica set controller.
const (
	// ReasonSuccessfulCreate: an instance was created.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	// ReasonFailedCreate: creating an instance failed.
	ReasonFailedCreate = "FailedCreate"
	// ReasonSuccessfulDelete: an instance was deleted.
	ReasonSuccessfulDelete = "SuccessfulDelete"
	// ReasonFailedDelete: deleting an instance failed.
	ReasonFailedDelete = "FailedDelete"
)

// Replicas is the wanted number of instances (1 when unset, as the apiserver defaults it).
func Replicas(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) int {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return int(*rs.Spec.Replicas)
}

// scalePlan is how a sync corrects the number of instances.
type scalePlan struct {
	create int
	delete []*kubevirtv1.VirtualMachineInstance
}

// planScale compares the active instances with the wanted replicas. On scale down the least
// useful go first: not ready before ready, earlier phases before later ones, newer before older.
func planScale(want int, active []*kubevirtv1.VirtualMachineInstance) scalePlan {
	diff := want - len(active)
	switch {
	case diff > 0:
		return scalePlan{create: min(diff, burst)}
	case diff < 0:
		sorted := append([]*kubevirtv1.VirtualMachineInstance(nil), active...)
		sort.SliceStable(sorted, func(i, j int) bool { return deleteBefore(sorted[i], sorted[j]) })
		return scalePlan{delete: sorted[:min(-diff, burst)]}
	}
	return scalePlan{}
}

// phaseRank orders phases by how far the guest got.
func phaseRank(p kubevirtv1.VirtualMachineInstancePhase) int {
	switch p {
	case kubevirtv1.VmPhaseUnset, kubevirtv1.Pending:
		return 0
	case kubevirtv1.Scheduling:
		return 1
	case kubevirtv1.Scheduled:
		return 2
	case kubevirtv1.Unknown:
		return 3
	default:
		return 4
	}
}

func deleteBefore(a, b *kubevirtv1.VirtualMachineInstance) bool {
	if ra, rb := vmis.IsReady(a), vmis.IsReady(b); ra != rb {
		return !ra
	}
	if pa, pb := phaseRank(a.Status.Phase), phaseRank(b.Status.Phase); pa != pb {
		return pa < pb
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.Name > b.Name
}

// replicaAPI is what scaling writes, as function fields so that tests are tables of stubs.
type replicaAPI struct {
	create func(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance) (*kubevirtv1.VirtualMachineInstance, error)
	delete func(ctx context.Context, namespace, name string, uid types.UID) error
	event  func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet, eventType, reason, message string)
	exp    *expectations.Expectations
}

// newInstance builds one replica from the template: generateName <rs>-, the template's
// metadata and spec, the replica set as controller and the controller finalizer (so that the
// VMI controller needs no write to add it).
func newInstance(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) *kubevirtv1.VirtualMachineInstance {
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{
		GenerateName:    rs.Name + "-",
		Namespace:       rs.Namespace,
		OwnerReferences: []metav1.OwnerReference{ownerref.Controller(kubevirtv1.SchemeGroupVersion.String(), rsKind, rs)},
		Finalizers:      []string{kubevirtv1.VirtualMachineControllerFinalizer},
	}}
	if t := rs.Spec.Template; t != nil {
		vmi.Labels = copyMap(t.ObjectMeta.Labels)
		vmi.Annotations = copyMap(t.ObjectMeta.Annotations)
		t.Spec.DeepCopyInto(&vmi.Spec)
	}
	return vmi
}

// execute carries out the plan; instances that finished are deleted too, to be replaced.
// Expectations are raised before each write and lowered again when a write fails.
func (a *replicaAPI) execute(ctx context.Context, key string, rs *kubevirtv1.VirtualMachineInstanceReplicaSet,
	p scalePlan, finished []*kubevirtv1.VirtualMachineInstance) (string, error) {
	logger := klog.FromContext(ctx)
	var createErrs, deleteErrs []error
	for i := 0; i < p.create; i++ {
		a.exp.ExpectCreations(key, 1)
		created, err := a.create(ctx, newInstance(rs))
		if err != nil {
			a.exp.CreationObserved(key)
			a.event(rs, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating virtual machine instance: "+err.Error())
			createErrs = append(createErrs, err)
			break
		}
		logger.V(2).Info("Created instance", "vmi", klog.KObj(created))
		a.event(rs, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created virtual machine instance: "+created.Name)
	}
	for _, vmi := range append(append([]*kubevirtv1.VirtualMachineInstance(nil), p.delete...), finished...) {
		a.exp.ExpectDeletion(key, vmi.UID)
		if err := a.delete(ctx, vmi.Namespace, vmi.Name, vmi.UID); err != nil {
			a.exp.DeletionObserved(key, vmi.UID)
			if apierrors.IsNotFound(err) {
				continue
			}
			a.event(rs, corev1.EventTypeWarning, ReasonFailedDelete, fmt.Sprintf("Error deleting virtual machine instance %s: %v", vmi.Name, err))
			deleteErrs = append(deleteErrs, err)
			continue
		}
		logger.V(2).Info("Deleted instance", "vmi", klog.KObj(vmi))
		a.event(rs, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted virtual machine instance: "+vmi.Name)
	}
	switch {
	case len(createErrs) > 0:
		return ReasonFailedCreate, errors.Join(append(createErrs, deleteErrs...)...)
	case len(deleteErrs) > 0:
		return ReasonFailedDelete, errors.Join(deleteErrs...)
	}
	return "", nil
}

func copyMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
