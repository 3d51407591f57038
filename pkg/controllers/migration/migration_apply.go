package migration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/conditions"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/finalizer"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// apply makes the plan's writes in order: pods, the instance's status, the migration's status,
// its finalizer; then the events. An error stops there and the sync is retried: every step
// decides again from what the caches show then.
func (c *Controller) apply(ctx context.Context, key string, in *input, p *plan) error {
	logger := klog.FromContext(ctx)
	m := in.m
	if p.createTarget {
		if err := c.createTarget(ctx, key, in, p); err != nil {
			return err
		}
	}
	for _, pod := range p.deleteTargets {
		if err := c.deletePod(ctx, key, m, pod, "Deleted migration target pod "+pod.Name); err != nil {
			return err
		}
	}
	if pod := p.deleteSource; pod != nil {
		if err := c.deletePod(ctx, key, m, pod, "Deleted the source pod "+pod.Name+", which lingered after the migration"); err != nil {
			return err
		}
	}

	state := ownState(m, in.vmi)
	if p.writeState || p.nodeName != "" {
		vmi := in.vmi.DeepCopy()
		if p.writeState {
			vmi.Status.MigrationState = p.state.DeepCopy()
		}
		if p.nodeName != "" {
			vmi.Status.NodeName = p.nodeName
		}
		updated, err := c.api.updateVMIStatus(ctx, vmi)
		if err != nil {
			return fmt.Errorf("writing the instance's migration state: %w", err)
		}
		c.exp.ExpectVersion(vmiKey(vmi.Namespace, vmi.Name), updated.ResourceVersion)
		state = ownState(m, updated)
		if p.nodeName != "" {
			logger.Info("Handed the instance over to the migration target", "node", p.nodeName)
		}
	}

	st := m.Status.DeepCopy()
	setPhase(st, p.phase, in.now)
	for _, cond := range p.setConditions {
		if cond.Type == ConditionTargetPodUnschedulable && conditions.Migration(st, cond.Type) == nil {
			p.event(corev1.EventTypeWarning, EventTargetUnschedulable, "Migration target pod is currently unschedulable: "+cond.Message)
		}
		conditions.SetMigration(st, cond, in.now)
	}
	for _, t := range p.dropConditions {
		conditions.DropMigration(st, t)
	}
	if p.phase == kubevirtv1.MigrationFailed && p.failReason != "" {
		conditions.DropMigration(st, ConditionTargetPodUnschedulable)
		conditions.SetMigration(st, kubevirtv1.VirtualMachineInstanceMigrationCondition{Type: ConditionFailed, Status: corev1.ConditionTrue,
			Reason: p.failReason, Message: p.failMessage}, in.now)
	}
	if state != nil && (!apiequality.Semantic.DeepEqual(st, &m.Status) || isFinal(p.phase)) {
		// The migration object carries a copy of the instance's migrationState, final at the end.
		st.MigrationState = state.DeepCopy()
	}
	if !apiequality.Semantic.DeepEqual(st, &m.Status) {
		if st.Phase != m.Status.Phase {
			logger.V(2).Info("Phase changed", "from", m.Status.Phase, "to", st.Phase, "reason", p.failReason)
		}
		updated := m.DeepCopy()
		updated.Status = *st
		written, err := c.api.updateStatus(ctx, updated)
		if err != nil {
			return fmt.Errorf("writing the migration status: %w", err)
		}
		c.exp.ExpectVersion(key, written.ResourceVersion)
		m = written
	}

	if p.addFinalizer || p.removeFinalizer {
		written, err := c.setFinalizer(ctx, m, p.addFinalizer)
		if err != nil && !(p.removeFinalizer && apierrors.IsNotFound(err)) {
			return fmt.Errorf("updating the migration's finalizer: %w", err)
		}
		if written != nil && !(written.DeletionTimestamp != nil && len(written.Finalizers) == 0) {
			c.exp.ExpectVersion(key, written.ResourceVersion)
		}
	}

	for _, e := range p.events {
		if e.onVMI {
			if in.vmi != nil {
				c.api.event(in.vmi, e.eventType, e.reason, e.message)
			}
			continue
		}
		c.api.event(in.m, e.eventType, e.reason, e.message)
	}
	return nil
}

// createTarget renders and creates the target launcher pod.
func (c *Controller) createTarget(ctx context.Context, key string, in *input, p *plan) error {
	pod, err := launcherpod.RenderMigrationTarget(in.vmi, c.cfg.Launcher, launcherpod.MigrationTarget{
		MigrationUID: in.m.UID, SourceNode: in.vmi.Status.NodeName, AddedNodeSelector: in.m.Spec.AddedNodeSelector})
	if err != nil {
		// No pod can be built for this instance: retrying does not help.
		p.createTarget = false
		p.fail(in, ReasonTargetRender, "Migration failed: the target pod cannot be rendered: "+err.Error())
		return nil
	}
	if !in.slotHeld {
		return fmt.Errorf("internal error: a target pod creation without the start lock")
	}
	c.exp.ExpectCreations(key, 1)
	created, err := c.api.createPod(ctx, pod)
	if err != nil {
		c.exp.CreationObserved(key)
		c.api.event(in.m, corev1.EventTypeWarning, EventFailedCreate, "Error creating the migration target pod: "+err.Error())
		return fmt.Errorf("creating the target pod: %w", err)
	}
	c.setStartingLocked(key, true)
	klog.FromContext(ctx).Info("Created the migration target pod", "pod", klog.KObj(created))
	p.event(corev1.EventTypeNormal, EventSuccessfulCreate, "Created migration target pod "+created.Name)
	return nil
}

// deletePod deletes a pod of the migration (precondition: its UID); a pod already gone is fine.
func (c *Controller) deletePod(ctx context.Context, key string, m *kubevirtv1.VirtualMachineInstanceMigration, pod *corev1.Pod, done string) error {
	c.exp.ExpectDeletion(key, pod.UID)
	err := c.api.deletePod(ctx, pod.Namespace, pod.Name, pod.UID)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		c.exp.DeletionObserved(key, pod.UID)
		return nil
	case err != nil:
		c.exp.DeletionObserved(key, pod.UID)
		c.api.event(m, corev1.EventTypeWarning, EventFailedDelete, fmt.Sprintf("Error deleting pod %s: %v", pod.Name, err))
		return fmt.Errorf("deleting pod %s: %w", pod.Name, err)
	}
	klog.FromContext(ctx).Info("Deleted a pod of the migration", "pod", klog.KObj(pod))
	c.api.event(m, corev1.EventTypeNormal, EventSuccessfulDelete, done)
	return nil
}

// setFinalizer adds or removes the migration finalizer; a concurrent change of the list makes the
// patch fail instead of being lost (finalizer.Patch).
func (c *Controller) setFinalizer(ctx context.Context, m *kubevirtv1.VirtualMachineInstanceMigration, add bool) (*kubevirtv1.VirtualMachineInstanceMigration, error) {
	data, err := finalizer.Patch(m, kubevirtv1.VirtualMachineInstanceMigrationFinalizer, add)
	if err != nil {
		return nil, err
	}
	return c.api.patch(ctx, m.Namespace, m.Name, data)
}
