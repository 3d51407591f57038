package bench

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSummarizeFailures(t *testing.T) {
	failed := map[string]string{"vm-003": "CopyFailed", "vm-001": "CopyFailed", "vm-007": ""}
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(int64(s), 0)) }
	ev := func(name, msg string, s int) corev1.Event {
		return corev1.Event{InvolvedObject: corev1.ObjectReference{Name: name}, Message: msg + "\n", FirstTimestamp: at(s)}
	}
	warnings := firstWarnings([]corev1.Event{
		ev("vm-003", "later", 20),
		ev("vm-003", "container container-disk-disk ended with exit code 128", 10),
	})
	got := summarizeFailures(failed, warnings)
	want := "CopyFailed: 2, e.g. vm-003: container container-disk-disk ended with exit code 128; no reason: 1"
	if got != want {
		t.Errorf("summarizeFailures = %q\nwant %q", got, want)
	}
}
