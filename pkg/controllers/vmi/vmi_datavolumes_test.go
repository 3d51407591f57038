package vmi

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/conditions"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

func testDV(name string, phase cdiv1beta1.DataVolumePhase, ready corev1.ConditionStatus) *cdiv1beta1.DataVolume {
	dv := &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	dv.Status.Phase = phase
	if ready != "" {
		dv.Status.Conditions = []cdiv1beta1.DataVolumeCondition{{Type: cdiv1beta1.DataVolumeReady, Status: ready}}
	}
	return dv
}

func TestSetDataVolumesReady(t *testing.T) {
	want := func(s corev1.ConditionStatus, reason, msg string) *kubevirtv1.VirtualMachineInstanceCondition {
		return &kubevirtv1.VirtualMachineInstanceCondition{Type: kubevirtv1.VirtualMachineInstanceDataVolumesReady, Status: s, Reason: reason, Message: msg}
	}
	for name, tc := range map[string]struct {
		dvs  []*cdiv1beta1.DataVolume
		want *kubevirtv1.VirtualMachineInstanceCondition
	}{
		"no DataVolumes: no condition": {},
		"all ready": {dvs: []*cdiv1beta1.DataVolume{testDV("a", cdiv1beta1.Succeeded, corev1.ConditionTrue), testDV("b", cdiv1beta1.Succeeded, corev1.ConditionTrue)},
			want: want(corev1.ConditionTrue, "AllDVsReady", "All of the VMI's DVs are bound and not running")},
		"one without a Ready condition: Unknown": {dvs: []*cdiv1beta1.DataVolume{testDV("a", cdiv1beta1.Succeeded, corev1.ConditionTrue), testDV("b", "", "")},
			want: want(corev1.ConditionUnknown, "NotAllDVsReady", "Not all of the VMI's DVs are ready")},
		"one not ready: False, over Unknown": {dvs: []*cdiv1beta1.DataVolume{testDV("a", "", ""), testDV("b", cdiv1beta1.ImportInProgress, corev1.ConditionFalse), testDV("c", "", "")},
			want: want(corev1.ConditionFalse, "NotAllDVsReady", "Not all of the VMI's DVs are ready")},
	} {
		t.Run(name, func(t *testing.T) {
			var st kubevirtv1.VirtualMachineInstanceStatus
			setDataVolumesReady(&st, tc.dvs, testNow)
			if c := conditions.VMI(&st, kubevirtv1.VirtualMachineInstanceDataVolumesReady); c != nil {
				if !c.LastTransitionTime.Time.Equal(testNow.Truncate(time.Second)) {
					t.Errorf("transition time %v", c.LastTransitionTime)
				}
				c.LastTransitionTime = metav1.Time{}
			}
			if diff := cmp.Diff(tc.want, conditions.VMI(&st, kubevirtv1.VirtualMachineInstanceDataVolumesReady)); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
		})
	}
}

func withDataVolume(name string, hotpluggable bool) func(*kubevirtv1.VirtualMachineInstance) {
	return func(vmi *kubevirtv1.VirtualMachineInstance) {
		vmi.Spec.Volumes = append(vmi.Spec.Volumes, kubevirtv1.Volume{Name: name,
			VolumeSource: kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: name, Hotpluggable: hotpluggable}}})
	}
}

// dvFixture is a fixture whose controller follows dvs and finds a claim for every name.
func dvFixture(t *testing.T, vmi *kubevirtv1.VirtualMachineInstance, dvs map[string]*cdiv1beta1.DataVolume) *fixture {
	f := newFixture(t, vmi)
	f.c.dataVolumes = func(_, name string) (*cdiv1beta1.DataVolume, error) {
		if dv, ok := dvs[name]; ok {
			return dv, nil
		}
		return nil, apierrors.NewNotFound(cdiv1beta1.Resource("datavolumes"), name)
	}
	f.c.pods.render = renderer(launcherpod.Config{UseEmulation: true, Claims: func(namespace, name string) (*corev1.PersistentVolumeClaim, error) {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}, nil
	}})
	return f
}

func dataVolumesReady(vmi *kubevirtv1.VirtualMachineInstance) *kubevirtv1.VirtualMachineInstanceCondition {
	return conditions.VMI(&vmi.Status, kubevirtv1.VirtualMachineInstanceDataVolumesReady)
}

// TestSyncWaitsForDataVolumes: as KubeVirt's, the launcher pod of an instance waits until its
// DataVolumes may be used, DataVolumesReady saying so; the condition then rides along with the
// Scheduled write.
func TestSyncWaitsForDataVolumes(t *testing.T) {
	dvs := map[string]*cdiv1beta1.DataVolume{"disk": testDV("disk", cdiv1beta1.ImportInProgress, corev1.ConditionFalse)}
	f := dvFixture(t, testVMI(withDataVolume("disk", false)), dvs)
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, f.sync()); diff != "" {
		t.Fatalf("importing (-want +got):\n%s", diff)
	}
	vmi := f.refresh()
	if c := dataVolumesReady(vmi); c == nil || c.Status != corev1.ConditionFalse || c.Reason != ReasonNotAllDVsReady {
		t.Errorf("while importing: DataVolumesReady %+v, want False NotAllDVsReady", c)
	}
	if vmi.Status.Phase != kubevirtv1.Pending {
		t.Errorf("phase %s, want Pending", vmi.Status.Phase)
	}
	if len(f.pods()) != 0 {
		t.Fatal("a launcher pod was created while the DataVolume imports")
	}
	if got := f.sync(); len(got) != 0 {
		t.Errorf("still importing: writes %v", got)
	}

	dvs["disk"] = testDV("disk", cdiv1beta1.Succeeded, corev1.ConditionTrue)
	if diff := cmp.Diff([]string{"create pods"}, f.sync()); diff != "" {
		t.Fatalf("imported (-want +got):\n%s", diff)
	}
	pod := f.pods()[0].DeepCopy()
	bound("node1")(pod)
	_ = f.podStore.Add(pod)
	f.c.podEvents.OnAdd(pod, false)
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, f.sync()); diff != "" {
		t.Fatalf("scheduled (-want +got):\n%s", diff)
	}
	vmi = f.refresh()
	if c := dataVolumesReady(vmi); vmi.Status.Phase != kubevirtv1.Scheduled || c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonAllDVsReady {
		t.Errorf("scheduled: phase %s, DataVolumesReady %+v", vmi.Status.Phase, c)
	}
}

// TestSyncDataVolumesUsable: WaitForFirstConsumer (the launcher pod is the first consumer), a
// missing DataVolume (the claim decides) and a hotplugged volume do not hold the pod back.
func TestSyncDataVolumesUsable(t *testing.T) {
	for name, tc := range map[string]struct {
		vmi *kubevirtv1.VirtualMachineInstance
		dvs map[string]*cdiv1beta1.DataVolume
	}{
		"WaitForFirstConsumer": {vmi: testVMI(withDataVolume("disk", false)),
			dvs: map[string]*cdiv1beta1.DataVolume{"disk": testDV("disk", cdiv1beta1.WaitForFirstConsumer, corev1.ConditionFalse)}},
		"PendingPopulation": {vmi: testVMI(withDataVolume("disk", false)),
			dvs: map[string]*cdiv1beta1.DataVolume{"disk": testDV("disk", cdiv1beta1.PendingPopulation, corev1.ConditionFalse)}},
		"no DataVolume":        {vmi: testVMI(withDataVolume("disk", false))},
		"hotplugged":           {vmi: testVMI(withDataVolume("hot", true)), dvs: map[string]*cdiv1beta1.DataVolume{"hot": testDV("hot", cdiv1beta1.ImportInProgress, corev1.ConditionFalse)}},
		"no dataVolume volume": {vmi: testVMI()},
	} {
		t.Run(name, func(t *testing.T) {
			f := dvFixture(t, tc.vmi, tc.dvs)
			// No write of its own: the condition, if any, rides along with the Scheduled write.
			if diff := cmp.Diff([]string{"create pods"}, f.sync()); diff != "" {
				t.Fatalf("first sync (-want +got):\n%s", diff)
			}
		})
	}
}
