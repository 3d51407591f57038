package vmi

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/expectations"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/wiring"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// Event reasons of attachment pods.
const (
	ReasonHotplugPodCreated = "SuccessfulCreateAttachmentPod"
	ReasonHotplugPodDeleted = "SuccessfulDeleteAttachmentPod"
	ReasonHotplugFailed     = "FailedHotplugVolume"
)

// hotplugAPI keeps one attachment pod per hotplugged volume of a running instance (see
// launcherpod.RenderAttachmentPod), as function fields so that tests stub them.
type hotplugAPI struct {
	lister corelisters.PodLister
	render func(vmi *kubevirtv1.VirtualMachineInstance, vol *kubevirtv1.Volume, node string) (*corev1.Pod, error)
	create func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	delete func(ctx context.Context, pod *corev1.Pod) error
	event  func(vmi *kubevirtv1.VirtualMachineInstance, eventType, reason, message string)
}

// EnableHotplug lets the controller keep attachment pods, from an informer of attachment pods
// (launcherpod.HotplugSelector). It must be called before the informers start.
func (c *Controller) EnableHotplug(kube kubernetes.Interface, informer coreinformers.PodInformer, cfg launcherpod.Config) error {
	c.hotplug = &hotplugAPI{
		lister: informer.Lister(),
		render: func(vmi *kubevirtv1.VirtualMachineInstance, vol *kubevirtv1.Volume, node string) (*corev1.Pod, error) {
			return launcherpod.RenderAttachmentPod(vmi, vol, node, cfg)
		},
		create: func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
			return kube.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		},
		delete: func(ctx context.Context, pod *corev1.Pod) error {
			return kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}})
		},
		event: c.pods.event,
	}
	c.synced = append(c.synced, informer.Informer().HasSynced)
	return wiring.Register(wiring.Handler{Informer: informer.Informer(), Handler: wiring.Children(c.queue, expectations.New(), ownerKey, nil)})
}

// syncAttachmentPods creates the attachment pods of the running instance's hotplugged volumes
// and deletes those of volumes that left its spec once the node agent no longer reports them
// (the guest let go of the disk).
func (h *hotplugAPI) syncAttachmentPods(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, launcher *corev1.Pod) error {
	have, err := h.lister.Pods(vmi.Namespace).List(labels.SelectorFromSet(labels.Set{launcherpod.HotplugForLabel: string(vmi.UID)}))
	if err != nil {
		return err
	}
	byVolume := map[string]*corev1.Pod{}
	for _, p := range have {
		byVolume[p.Labels[launcherpod.HotplugVolumeLabel]] = p
	}
	want := map[string]bool{}
	var errs []error
	if vmi.Status.Phase == kubevirtv1.Running && vmi.DeletionTimestamp == nil && vmi.Status.NodeName != "" {
		for _, v := range launcherpod.HotplugVolumes(vmi, launcher) {
			want[v.Name] = true
			if byVolume[v.Name] != nil {
				continue
			}
			errs = append(errs, h.createPod(ctx, vmi, &v))
		}
	}
	reported := map[string]bool{}
	for _, s := range vmi.Status.VolumeStatus {
		reported[s.Name] = true
	}
	for vol, p := range byVolume {
		if want[vol] || p.DeletionTimestamp != nil || (reported[vol] && vmi.Status.Phase == kubevirtv1.Running) {
			continue
		}
		if err := h.delete(ctx, p); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting attachment pod %s: %w", p.Name, err))
			continue
		}
		klog.FromContext(ctx).V(2).Info("Deleted an attachment pod", "pod", klog.KObj(p), "volume", vol)
		h.event(vmi, corev1.EventTypeNormal, ReasonHotplugPodDeleted, fmt.Sprintf("Deleted attachment pod %s of volume %s", p.Name, vol))
	}
	return errors.Join(errs...)
}

func (h *hotplugAPI) createPod(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, vol *kubevirtv1.Volume) error {
	pod, err := h.render(vmi, vol, vmi.Status.NodeName)
	if err != nil {
		h.event(vmi, corev1.EventTypeWarning, ReasonHotplugFailed, fmt.Sprintf("Volume %s: %v", vol.Name, err))
		if errors.Is(err, launcherpod.ErrClaimPending) {
			return err // retried with back-off until the claim exists
		}
		return nil
	}
	created, err := h.create(ctx, pod)
	if apierrors.IsAlreadyExists(err) {
		return nil // the cache is behind
	}
	if err != nil {
		h.event(vmi, corev1.EventTypeWarning, ReasonHotplugFailed, fmt.Sprintf("Error creating attachment pod of volume %s: %v", vol.Name, err))
		return fmt.Errorf("creating the attachment pod of volume %s: %w", vol.Name, err)
	}
	klog.FromContext(ctx).Info("Created an attachment pod", "pod", klog.KObj(created), "volume", vol.Name)
	h.event(vmi, corev1.EventTypeNormal, ReasonHotplugPodCreated, fmt.Sprintf("Created attachment pod %s for volume %s", created.Name, vol.Name))
	return nil
}
