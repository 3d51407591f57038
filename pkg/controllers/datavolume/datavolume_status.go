package datavolume

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// CDI's condition reasons.
const (
	reasonBound            = "Bound"
	reasonPending          = "Pending"
	reasonClaimLost        = "ClaimLost"
	reasonNotFound         = "NotFound"
	reasonCompleted        = "Completed"
	reasonError            = "Error"
	reasonCrashLoopBackOff = "CrashLoopBackOff"
	reasonImagePullFailed  = "ImagePullFailed"
	reasonWaitForConsumer  = "WaitForFirstConsumer"
	// progressNA is the progress of a DataVolume not being populated.
	progressNA = "N/A"
	// progressDone is the progress of a populated DataVolume.
	progressDone = "100.0%"
)

// observation is what the controller saw of a DataVolume's world.
type observation struct {
	// blocked, when set, is why population cannot start (a missing source): reason and message.
	blocked *blocker
	claim   *corev1.PersistentVolumeClaim
	// adopted: an existing claim was adopted, populated already.
	adopted bool
	// waitingForConsumer: the claim waits for a first consumer that does not exist yet.
	waitingForConsumer bool
	// pod is the importer pod (nil: not created yet).
	pod   *corev1.Pod
	clone bool
	// upload: the pod is an upload server.
	upload bool
	// progress is the importer's own report ("" when unknown).
	progress string
}

// blocker is a reason population cannot start.
type blocker struct{ reason, message string }

// terminationMessage is the importer's outcome (cmd/nativevirt-importer's Message).
type terminationMessage struct {
	Result *struct {
		Format      string   `json:"format"`
		Compression []string `json:"compression"`
		SourceBytes int64    `json:"sourceBytes"`
		Seconds     float64  `json:"seconds"`
	} `json:"result,omitempty"`
	PermanentError string `json:"permanentError,omitempty"`
	Error          string `json:"error,omitempty"`
}

// parseTermination reads a termination message (plain text when not the importer's JSON).
func parseTermination(msg string) terminationMessage {
	var m terminationMessage
	if msg == "" {
		return m
	}
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		m.Error = strings.TrimSpace(msg)
	}
	return m
}

// computeStatus derives a DataVolume's status from what was observed, keeping the transition
// times of conditions that did not change.
func computeStatus(dv *v1beta1.DataVolume, o observation, now metav1.Time) v1beta1.DataVolumeStatus {
	st := v1beta1.DataVolumeStatus{Progress: progressNA, RestartCount: dv.Status.RestartCount}
	if o.claim != nil {
		st.ClaimName = o.claim.Name
	}
	scheduled, inProgress, succeeded := v1beta1.ImportScheduled, v1beta1.ImportInProgress, v1beta1.Succeeded
	switch {
	case o.clone:
		scheduled, inProgress = v1beta1.CloneScheduled, v1beta1.CloneInProgress
	case o.upload:
		scheduled, inProgress = v1beta1.UploadScheduled, v1beta1.UploadReady
	}
	bound := boundCondition(o.claim)
	running := cond(v1beta1.DataVolumeRunning, corev1.ConditionFalse, "", "")
	switch {
	case o.blocked != nil:
		st.Phase = v1beta1.Pending
		running = cond(v1beta1.DataVolumeRunning, corev1.ConditionFalse, o.blocked.reason, o.blocked.message)
	case o.claim == nil:
		st.Phase = v1beta1.Pending
	case o.adopted:
		st.Phase, st.Progress = succeeded, progressDone
		running = cond(v1beta1.DataVolumeRunning, corev1.ConditionFalse, reasonCompleted, "Adopted an existing claim")
	case o.waitingForConsumer && o.pod == nil:
		st.Phase = v1beta1.WaitForFirstConsumer
		bound = cond(v1beta1.DataVolumeBound, corev1.ConditionFalse, reasonWaitForConsumer,
			fmt.Sprintf("PVC %s Pending: waiting for its first consumer to be scheduled", o.claim.Name))
	case o.pod == nil:
		st.Phase = scheduled
	default:
		st.Phase, running = podPhase(o.pod, scheduled, inProgress, succeeded)
		st.RestartCount = restarts(o.pod)
		if st.Phase == v1beta1.UploadReady && !podReady(o.pod) {
			// The upload server answers only once it is ready.
			st.Phase = v1beta1.UploadScheduled
		}
		switch st.Phase {
		case inProgress:
			if o.progress != "" {
				st.Progress = v1beta1.DataVolumeProgress(o.progress)
			} else if dv.Status.Progress != "" {
				st.Progress = dv.Status.Progress
			}
		case succeeded:
			st.Progress = progressDone
		}
	}
	ready := cond(v1beta1.DataVolumeReady, corev1.ConditionFalse, "", "")
	if st.Phase == v1beta1.Succeeded {
		ready = cond(v1beta1.DataVolumeReady, corev1.ConditionTrue, "", "")
	}
	for _, c := range []v1beta1.DataVolumeCondition{bound, running, ready} {
		st.Conditions = append(st.Conditions, keepTimes(dv.Status.Conditions, c, now))
	}
	return st
}

// podPhase reads the importer pod: its phase, and the Running condition.
func podPhase(pod *corev1.Pod, scheduled, inProgress, succeeded v1beta1.DataVolumePhase) (v1beta1.DataVolumePhase, v1beta1.DataVolumeCondition) {
	cs := importerStatus(pod)
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		var term terminationMessage
		if cs != nil && cs.State.Terminated != nil {
			term = parseTermination(cs.State.Terminated.Message)
		}
		if term.PermanentError != "" {
			return v1beta1.Failed, cond(v1beta1.DataVolumeRunning, corev1.ConditionFalse, reasonError, term.PermanentError)
		}
		return succeeded, cond(v1beta1.DataVolumeRunning, corev1.ConditionFalse, reasonCompleted, "Import Complete")
	case corev1.PodFailed:
		msg := pod.Status.Message
		if msg == "" {
			msg = "the importer pod failed"
		}
		return inProgress, cond(v1beta1.DataVolumeRunning, corev1.ConditionFalse, reasonError, msg)
	}
	// Images that cannot be pulled (the registry image above all) stop it before it starts.
	for _, s := range append(append([]corev1.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if w := s.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff" || w.Reason == "InvalidImageName") {
			return scheduled, cond(v1beta1.DataVolumeRunning, corev1.ConditionFalse, reasonImagePullFailed,
				fmt.Sprintf("%s: %s", w.Reason, w.Message))
		}
	}
	if cs == nil || (cs.State.Running == nil && cs.RestartCount == 0 && cs.LastTerminationState.Terminated == nil) {
		return scheduled, cond(v1beta1.DataVolumeRunning, corev1.ConditionFalse, reasonPending, "")
	}
	// A failed attempt: the kubelet retries it with back-off; say why it failed.
	if last := cs.LastTerminationState.Terminated; last != nil && cs.State.Running == nil {
		reason := reasonError
		if w := cs.State.Waiting; w != nil && w.Reason == reasonCrashLoopBackOff {
			reason = reasonCrashLoopBackOff
		}
		msg := parseTermination(last.Message).Error
		if msg == "" {
			msg = fmt.Sprintf("the importer exited with code %d (%s)", last.ExitCode, last.Reason)
		}
		return inProgress, cond(v1beta1.DataVolumeRunning, corev1.ConditionFalse, reason, msg)
	}
	return inProgress, cond(v1beta1.DataVolumeRunning, corev1.ConditionTrue, "", "")
}

// importerStatus is the status of the pod's main container.
func importerStatus(pod *corev1.Pod) *corev1.ContainerStatus {
	if len(pod.Status.ContainerStatuses) == 0 {
		return nil
	}
	return &pod.Status.ContainerStatuses[0]
}

// restarts is the importer's restart count.
func restarts(pod *corev1.Pod) int32 {
	if cs := importerStatus(pod); cs != nil {
		return cs.RestartCount
	}
	return 0
}

// boundCondition tells whether the claim is bound, in CDI's words.
func boundCondition(claim *corev1.PersistentVolumeClaim) v1beta1.DataVolumeCondition {
	if claim == nil {
		return cond(v1beta1.DataVolumeBound, corev1.ConditionFalse, reasonNotFound, "No PVC found")
	}
	switch claim.Status.Phase {
	case corev1.ClaimBound:
		return cond(v1beta1.DataVolumeBound, corev1.ConditionTrue, reasonBound, fmt.Sprintf("PVC %s Bound", claim.Name))
	case corev1.ClaimLost:
		return cond(v1beta1.DataVolumeBound, corev1.ConditionFalse, reasonClaimLost, "Claim Lost")
	}
	return cond(v1beta1.DataVolumeBound, corev1.ConditionFalse, reasonPending, fmt.Sprintf("PVC %s Pending", claim.Name))
}

func cond(t v1beta1.DataVolumeConditionType, s corev1.ConditionStatus, reason, msg string) v1beta1.DataVolumeCondition {
	return v1beta1.DataVolumeCondition{Type: t, Status: s, Reason: reason, Message: msg}
}

// keepTimes sets c's times: the old transition time when its status did not change.
func keepTimes(old []v1beta1.DataVolumeCondition, c v1beta1.DataVolumeCondition, now metav1.Time) v1beta1.DataVolumeCondition {
	c.LastTransitionTime, c.LastHeartbeatTime = now, now
	for _, o := range old {
		if o.Type != c.Type {
			continue
		}
		if o.Status == c.Status {
			c.LastTransitionTime = o.LastTransitionTime
			if o.Reason == c.Reason && o.Message == c.Message {
				c.LastHeartbeatTime = o.LastHeartbeatTime
			}
		}
	}
	return c
}

// importSummary describes a finished import for its event ("" when the pod does not say):
// what was read, how fast.
func importSummary(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	cs := importerStatus(pod)
	if cs == nil || cs.State.Terminated == nil {
		return ""
	}
	r := parseTermination(cs.State.Terminated.Message).Result
	if r == nil {
		return ""
	}
	mib := float64(r.SourceBytes) / (1 << 20)
	format := r.Format
	for _, c := range r.Compression {
		format += "." + c
	}
	rate := ""
	if r.Seconds > 0 {
		rate = fmt.Sprintf(", %.1f MiB/s", mib/r.Seconds)
	}
	return fmt.Sprintf(": %.1f MiB of %s in %.1fs%s", mib, format, r.Seconds, rate)
}
