package vmi

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/expectations"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// Event reasons of the VMI controller.
const (
	// ReasonSuccessfulCreate: the launcher pod was created.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	// ReasonFailedCreate: creating the launcher pod failed.
	ReasonFailedCreate = "FailedCreate"
	// ReasonSuccessfulDelete: a launcher pod was deleted.
	ReasonSuccessfulDelete = "SuccessfulDelete"
	// ReasonFailedDelete: deleting a launcher pod failed.
	ReasonFailedDelete = "FailedDelete"
	// ReasonFailedPvcNotFound: a claim the instance uses does not exist (yet).
	ReasonFailedPvcNotFound = "FailedPvcNotFound"
)

// podAPI is what the pod reconciler writes, as function fields so that tests are tables of stubs.
type podAPI struct {
	create func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	// delete deletes a pod; grace overrides the pod's own grace period when set.
	delete func(ctx context.Context, namespace, name string, uid types.UID, grace *int64) error
	event  func(vmi *kubevirtv1.VirtualMachineInstance, eventType, reason, message string)
	render func(vmi *kubevirtv1.VirtualMachineInstance) (*corev1.Pod, error)
	// nadExists looks the instance's NetworkAttachmentDefinitions up (Multus networks).
	nadExists NetworkAttachmentLookup
	exp       *expectations.Expectations
}

// ensurePod creates the launcher pod of an instance that has none and has not gone past
// Pending. It returns the instance's pods including the new one. An instance that lost its pod
// later is not given a second one: it fails (see nextPhase).
func (a *podAPI) ensurePod(ctx context.Context, key string, vmi *kubevirtv1.VirtualMachineInstance, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	if len(pods) > 0 {
		return pods, nil
	}
	if p := vmi.Status.Phase; p != kubevirtv1.VmPhaseUnset && p != kubevirtv1.Pending {
		return pods, nil
	}
	if err := a.checkNetworkAttachments(ctx, vmi); err != nil {
		if errors.Is(err, errNetworkAttachmentMissing) {
			a.event(vmi, corev1.EventTypeWarning, ReasonFailedCreate, networkAttachmentMessage(err))
		}
		return pods, err
	}
	pod, err := a.render(vmi)
	if errors.Is(err, launcherpod.ErrClaimPending) {
		// KubeVirt's reason: the pod is built once the claim exists (retried with back-off).
		a.event(vmi, corev1.EventTypeWarning, ReasonFailedPvcNotFound, err.Error())
		return pods, err
	}
	if err != nil {
		// A spec no pod can be built for does not get better by retrying.
		a.event(vmi, corev1.EventTypeWarning, ReasonFailedCreate, "Error rendering the launcher pod: "+err.Error())
		return pods, nil
	}
	a.exp.ExpectCreations(key, 1)
	created, err := a.create(ctx, pod)
	if err != nil {
		a.exp.CreationObserved(key)
		a.event(vmi, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating pod: "+err.Error())
		return pods, fmt.Errorf("creating the launcher pod: %w", err)
	}
	klog.FromContext(ctx).Info("Created the launcher pod", "pod", klog.KObj(created))
	a.event(vmi, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created virtual machine pod "+created.Name)
	return append(pods, created), nil
}

// StopGracePeriodAnnotation on an instance holds the grace period of a stop request with an
// explicit grace period (set by the apiserver's stop subresource before it deletes the instance).
const StopGracePeriodAnnotation = "kubevirt.io/stop-grace-period-seconds"

// stopGracePeriod is the grace period a stop request asked for when it is shorter than the
// pod's own (the instance's grace period plus launcherpod.PodGracePeriodSlack), else nil: the
// pod then gets its own, the time the launcher needs to shut the guest down and exit.
func stopGracePeriod(vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod) *int64 {
	raw, ok := vmi.Annotations[StopGracePeriodAnnotation]
	if !ok {
		return nil
	}
	g, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || g < 0 {
		return nil
	}
	if own := pod.Spec.TerminationGracePeriodSeconds; own != nil && g >= *own {
		return nil
	}
	return &g
}

// deletePods deletes the instance's pods that are not already going away, with their own grace
// period unless a stop request asked for a shorter one. It reports whether any pod still exists.
func (a *podAPI) deletePods(ctx context.Context, key string, vmi *kubevirtv1.VirtualMachineInstance, pods []*corev1.Pod) (bool, error) {
	var errs []error
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		a.exp.ExpectDeletion(key, p.UID)
		if err := a.delete(ctx, p.Namespace, p.Name, p.UID, stopGracePeriod(vmi, p)); err != nil {
			a.exp.DeletionObserved(key, p.UID)
			if apierrors.IsNotFound(err) {
				continue
			}
			a.event(vmi, corev1.EventTypeWarning, ReasonFailedDelete, fmt.Sprintf("Error deleting pod %s: %v", p.Name, err))
			errs = append(errs, err)
			continue
		}
		klog.FromContext(ctx).Info("Deleted the launcher pod", "pod", klog.KObj(p))
		a.event(vmi, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted virtual machine pod "+p.Name)
	}
	if len(errs) > 0 {
		return true, fmt.Errorf("deleting launcher pods: %v", errs)
	}
	return len(pods) > 0, nil
}

// livePods are the pods that still run something (not ended, not being deleted).
func livePods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// renderer binds launcherpod.Render to the controller's configuration.
func renderer(cfg launcherpod.Config) func(*kubevirtv1.VirtualMachineInstance) (*corev1.Pod, error) {
	return func(vmi *kubevirtv1.VirtualMachineInstance) (*corev1.Pod, error) { return launcherpod.Render(vmi, cfg) }
}
