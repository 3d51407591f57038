package datavolume

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

func boundClaim(phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
}

func pod(phase corev1.PodPhase, cs ...corev1.ContainerStatus) *corev1.Pod {
	return &corev1.Pod{Status: corev1.PodStatus{Phase: phase, ContainerStatuses: cs}}
}

func readyPod(cs ...corev1.ContainerStatus) *corev1.Pod {
	p := pod(corev1.PodRunning, cs...)
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	return p
}

func running() corev1.ContainerStatus {
	return corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func terminated(msg string) corev1.ContainerStatus {
	return corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: msg}}}
}

func TestComputeStatus(t *testing.T) {
	retrying := corev1.ContainerStatus{RestartCount: 3,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: `{"error":"unable to connect: 404"}`}}}
	pullFailed := pod(corev1.PodPending)
	pullFailed.Status.InitContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason: "ErrImagePull", Message: "not found"}}}}
	for _, tc := range []struct {
		name     string
		o        observation
		phase    v1beta1.DataVolumePhase
		progress v1beta1.DataVolumeProgress
		bound    corev1.ConditionStatus
		running  corev1.ConditionStatus
		reason   string
		message  string
		restarts int32
	}{
		{name: "no claim", o: observation{}, phase: v1beta1.Pending, progress: "N/A", bound: corev1.ConditionFalse, running: corev1.ConditionFalse},
		{name: "blocked", o: observation{blocked: &blocker{"NotFound", "DataSource ns/x not found"}}, phase: v1beta1.Pending, progress: "N/A",
			bound: corev1.ConditionFalse, running: corev1.ConditionFalse, reason: "NotFound", message: "not found"},
		{name: "waiting for a consumer", o: observation{claim: boundClaim(corev1.ClaimPending), waitingForConsumer: true},
			phase: v1beta1.WaitForFirstConsumer, progress: "N/A", bound: corev1.ConditionFalse, running: corev1.ConditionFalse},
		{name: "pod pending", o: observation{claim: boundClaim(corev1.ClaimPending), pod: pod(corev1.PodPending)},
			phase: v1beta1.ImportScheduled, progress: "N/A", bound: corev1.ConditionFalse, running: corev1.ConditionFalse, reason: "Pending"},
		{name: "upload pending", o: observation{claim: boundClaim(corev1.ClaimBound), pod: pod(corev1.PodPending), upload: true},
			phase: v1beta1.UploadScheduled, progress: "N/A", bound: corev1.ConditionTrue, running: corev1.ConditionFalse, reason: "Pending"},
		{name: "upload server not ready", o: observation{claim: boundClaim(corev1.ClaimBound), pod: pod(corev1.PodRunning, running()), upload: true},
			phase: v1beta1.UploadScheduled, progress: "N/A", bound: corev1.ConditionTrue, running: corev1.ConditionTrue},
		{name: "upload ready", o: observation{claim: boundClaim(corev1.ClaimBound), pod: readyPod(running()), upload: true, progress: "12.00%"},
			phase: v1beta1.UploadReady, progress: "12.00%", bound: corev1.ConditionTrue, running: corev1.ConditionTrue},
		{name: "upload done", o: observation{claim: boundClaim(corev1.ClaimBound), pod: pod(corev1.PodSucceeded, terminated(`{"result":{"format":"qcow2"}}`)), upload: true},
			phase: v1beta1.Succeeded, progress: "100.0%", bound: corev1.ConditionTrue, running: corev1.ConditionFalse, reason: "Completed"},
		{name: "upload not an image", o: observation{claim: boundClaim(corev1.ClaimBound), pod: pod(corev1.PodSucceeded, terminated(`{"permanentError":"the source is text, not a disk image"}`)), upload: true},
			phase: v1beta1.Failed, progress: "N/A", bound: corev1.ConditionTrue, running: corev1.ConditionFalse, reason: "Error", message: "not a disk image"},
		{name: "clone pending", o: observation{claim: boundClaim(corev1.ClaimBound), pod: pod(corev1.PodPending), clone: true},
			phase: v1beta1.CloneScheduled, progress: "N/A", bound: corev1.ConditionTrue, running: corev1.ConditionFalse, reason: "Pending"},
		{name: "image pull failed", o: observation{claim: boundClaim(corev1.ClaimBound), pod: pullFailed},
			phase: v1beta1.ImportScheduled, progress: "N/A", bound: corev1.ConditionTrue, running: corev1.ConditionFalse, reason: "ImagePullFailed", message: "not found"},
		{name: "running", o: observation{claim: boundClaim(corev1.ClaimBound), pod: pod(corev1.PodRunning, running()), progress: "47.16%"},
			phase: v1beta1.ImportInProgress, progress: "47.16%", bound: corev1.ConditionTrue, running: corev1.ConditionTrue},
		{name: "retrying", o: observation{claim: boundClaim(corev1.ClaimBound), pod: pod(corev1.PodRunning, retrying)},
			phase: v1beta1.ImportInProgress, progress: "N/A", bound: corev1.ConditionTrue, running: corev1.ConditionFalse,
			reason: "CrashLoopBackOff", message: "unable to connect: 404", restarts: 3},
		{name: "succeeded", o: observation{claim: boundClaim(corev1.ClaimBound), pod: pod(corev1.PodSucceeded, terminated(`{"result":{"format":"raw"}}`))},
			phase: v1beta1.Succeeded, progress: "100.0%", bound: corev1.ConditionTrue, running: corev1.ConditionFalse, reason: "Completed"},
		{name: "permanent error", o: observation{claim: boundClaim(corev1.ClaimBound), pod: pod(corev1.PodSucceeded, terminated(`{"permanentError":"not a disk image"}`))},
			phase: v1beta1.Failed, progress: "N/A", bound: corev1.ConditionTrue, running: corev1.ConditionFalse, reason: "Error", message: "not a disk image"},
		{name: "claim lost", o: observation{claim: boundClaim(corev1.ClaimLost), pod: pod(corev1.PodPending)},
			phase: v1beta1.ImportScheduled, progress: "N/A", bound: corev1.ConditionFalse, running: corev1.ConditionFalse, reason: "Pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dv := &v1beta1.DataVolume{}
			st := computeStatus(dv, tc.o, metav1.Now())
			get := func(ct v1beta1.DataVolumeConditionType) v1beta1.DataVolumeCondition {
				for _, c := range st.Conditions {
					if c.Type == ct {
						return c
					}
				}
				t.Fatalf("no %s condition", ct)
				return v1beta1.DataVolumeCondition{}
			}
			r := get(v1beta1.DataVolumeRunning)
			if st.Phase != tc.phase || st.Progress != tc.progress || get(v1beta1.DataVolumeBound).Status != tc.bound ||
				r.Status != tc.running || r.Reason != tc.reason || !strings.Contains(r.Message, tc.message) || st.RestartCount != tc.restarts {
				t.Errorf("status %+v", st)
			}
			wantReady := corev1.ConditionFalse
			if tc.phase == v1beta1.Succeeded {
				wantReady = corev1.ConditionTrue
			}
			if get(v1beta1.DataVolumeReady).Status != wantReady {
				t.Errorf("Ready %s, want %s", get(v1beta1.DataVolumeReady).Status, wantReady)
			}
		})
	}
}

// TestConditionTimes: a condition keeps its transition time while its status stays.
func TestConditionTimes(t *testing.T) {
	t0 := metav1.NewTime(time.Unix(100, 0))
	t1 := metav1.NewTime(time.Unix(200, 0))
	o := observation{claim: boundClaim(corev1.ClaimBound), pod: pod(corev1.PodRunning, running())}
	first := computeStatus(&v1beta1.DataVolume{}, o, t0)
	second := computeStatus(&v1beta1.DataVolume{Status: first}, o, t1)
	for i, c := range second.Conditions {
		if !c.LastTransitionTime.Equal(&t0) || !c.LastHeartbeatTime.Equal(&t0) {
			t.Errorf("%s: times %v %v, want the first's", c.Type, c.LastTransitionTime, first.Conditions[i].LastTransitionTime)
		}
	}
	o.pod = pod(corev1.PodSucceeded, terminated(""))
	third := computeStatus(&v1beta1.DataVolume{Status: second}, o, t1)
	for _, c := range third.Conditions {
		if c.Type == v1beta1.DataVolumeReady && !c.LastTransitionTime.Equal(&t1) {
			t.Errorf("Ready turned True at %v, want %v", c.LastTransitionTime, t1)
		}
	}
}

func TestImportSummary(t *testing.T) {
	p := pod(corev1.PodSucceeded, terminated(`{"result":{"format":"raw","compression":["gz"],"sourceBytes":10485760,"seconds":2}}`))
	if got := importSummary(p); got != ": 10.0 MiB of raw.gz in 2.0s, 5.0 MiB/s" {
		t.Errorf("summary %q", got)
	}
	if got := importSummary(nil); got != "" {
		t.Errorf("summary of no pod %q", got)
	}
}

// TestUploadAnnotations: the claim of an upload carries what virtctl reads.
func TestUploadAnnotations(t *testing.T) {
	for _, tc := range []struct {
		phase    v1beta1.DataVolumePhase
		pod      *corev1.Pod
		podPhase string
		ready    string
	}{
		{phase: v1beta1.UploadScheduled, podPhase: "Pending", ready: "false"},
		{phase: v1beta1.UploadScheduled, pod: pod(corev1.PodRunning), podPhase: "Running", ready: "false"},
		{phase: v1beta1.UploadReady, pod: readyPod(), podPhase: "Running", ready: "true"},
		{phase: v1beta1.Succeeded, pod: pod(corev1.PodSucceeded), podPhase: "Succeeded", ready: "false"},
		{phase: v1beta1.Failed, pod: pod(corev1.PodSucceeded), podPhase: "Failed", ready: "false"},
	} {
		ann := uploadAnnotations(tc.phase, tc.pod)
		if _, ok := ann[AnnUploadTarget]; !ok || ann[AnnPodPhase] != tc.podPhase || ann[AnnPodReady] != tc.ready {
			t.Errorf("%s: %v, want phase %s ready %s", tc.phase, ann, tc.podPhase, tc.ready)
		}
	}
}
