package vmi

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	cdiinformers "github.com/nativevirt/nativevirt/pkg/client/informers/externalversions/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/conditions"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/datavolumes"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/wiring"
)

// KubeVirt's reasons and messages of the instance condition DataVolumesReady.
const (
	ReasonAllDVsReady     = "AllDVsReady"
	ReasonNotAllDVsReady  = "NotAllDVsReady"
	messageAllDVsReady    = "All of the VMI's DVs are bound and not running"
	messageNotAllDVsReady = "Not all of the VMI's DVs are ready"
)

// dataVolumesLookup finds the DataVolume of a namespace and name; nil when the controller runs
// without DataVolumes.
type dataVolumesLookup func(namespace, name string) (*cdiv1beta1.DataVolume, error)

// EnableDataVolumes lets the controller follow the DataVolumes of the instances' dataVolume
// volumes: it holds back the launcher pod until they can be used and sets the condition
// DataVolumesReady. It must be called before the informers start.
func (c *Controller) EnableDataVolumes(informer cdiinformers.DataVolumeInformer) error {
	lister := informer.Lister()
	c.dataVolumes = func(namespace, name string) (*cdiv1beta1.DataVolume, error) {
		return lister.DataVolumes(namespace).Get(name)
	}
	c.synced = append(c.synced, informer.Informer().HasSynced)
	return wiring.Register(wiring.Handler{Informer: informer.Informer(), Handler: cache.ResourceEventHandlerFuncs{
		AddFunc: c.queueUsersOf,
		UpdateFunc: func(old, cur any) {
			o, ok1 := wiring.Object[*cdiv1beta1.DataVolume](old)
			n, ok2 := wiring.Object[*cdiv1beta1.DataVolume](cur)
			if ok1 && ok2 && o.Status.Phase == n.Status.Phase && datavolumes.ReadyStatus(o) == datavolumes.ReadyStatus(n) {
				return // nothing the instances look at changed (progress, restarts, …)
			}
			c.queueUsersOf(cur)
		},
		DeleteFunc: c.queueUsersOf,
	}})
}

// queueUsersOf queues the instances of the DataVolume's namespace that have a dataVolume volume
// naming it.
func (c *Controller) queueUsersOf(obj any) {
	dv, ok := wiring.Object[*cdiv1beta1.DataVolume](obj)
	if !ok {
		return
	}
	vmis, err := c.vmiLister.VirtualMachineInstances(dv.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, vmi := range vmis {
		for i := range vmi.Spec.Volumes {
			if v := vmi.Spec.Volumes[i].DataVolume; v != nil && v.Name == dv.Name {
				c.queue.Add(vmi.Namespace + "/" + vmi.Name)
				break
			}
		}
	}
}

// dataVolumesOf returns the existing DataVolumes of the instance's dataVolume volumes, and
// whether every one of those volumes may be used by a new launcher pod: its DataVolume
// Succeeded, or waits for the pod as first consumer (WaitForFirstConsumer, PendingPopulation),
// or does not exist (the claim alone decides, as for a persistentVolumeClaim volume). Hotplugged
// volumes do not hold the pod back.
func dataVolumesOf(get dataVolumesLookup, vmi *kubevirtv1.VirtualMachineInstance) ([]*cdiv1beta1.DataVolume, bool, error) {
	if get == nil {
		return nil, true, nil
	}
	var dvs []*cdiv1beta1.DataVolume
	usable := true
	for i := range vmi.Spec.Volumes {
		v := vmi.Spec.Volumes[i].DataVolume
		if v == nil {
			continue
		}
		dv, err := get(vmi.Namespace, v.Name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		dvs = append(dvs, dv)
		if !datavolumes.Usable(dv.Status.Phase) {
			usable = usable && v.Hotpluggable
		}
	}
	return dvs, usable, nil
}

// setDataVolumesReady sets KubeVirt's condition DataVolumesReady from the instance's
// DataVolumes (aggregateDataVolumesConditions): True when every one is Ready; otherwise False
// when one's Ready is False, else Unknown. Nothing is set for an instance without DataVolumes.
// The transition time is now (to the second) when the status changes, else kept.
func setDataVolumesReady(st *kubevirtv1.VirtualMachineInstanceStatus, dvs []*cdiv1beta1.DataVolume, now time.Time) {
	if len(dvs) == 0 {
		return
	}
	c := kubevirtv1.VirtualMachineInstanceCondition{Type: kubevirtv1.VirtualMachineInstanceDataVolumesReady,
		Status: corev1.ConditionTrue, Reason: ReasonAllDVsReady, Message: messageAllDVsReady}
	for _, dv := range dvs {
		switch datavolumes.ReadyStatus(dv) {
		case corev1.ConditionTrue:
		case corev1.ConditionFalse:
			c.Status, c.Reason = corev1.ConditionFalse, ReasonNotAllDVsReady
		default:
			c.Reason = ReasonNotAllDVsReady
			if c.Status == corev1.ConditionTrue {
				c.Status = corev1.ConditionUnknown
			}
		}
	}
	if c.Status != corev1.ConditionTrue {
		c.Message = messageNotAllDVsReady
	}
	c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	if old := conditions.VMI(st, c.Type); old != nil && old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	conditions.SetVMI(st, c)
}

// dataVolumesReadyChanged reports whether DataVolumesReady differs (status or reason): a change
// readers wait for (kubectl wait --for=condition=DataVolumesReady), worth a write of its own.
func dataVolumesReadyChanged(old, updated *kubevirtv1.VirtualMachineInstanceStatus) bool {
	o := conditions.VMI(old, kubevirtv1.VirtualMachineInstanceDataVolumesReady)
	n := conditions.VMI(updated, kubevirtv1.VirtualMachineInstanceDataVolumesReady)
	if o == nil || n == nil {
		return o != n
	}
	return o.Status != n.Status || o.Reason != n.Reason
}
