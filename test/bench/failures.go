package bench

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// failureReasons says why VMIs failed: each status reason (VMI name → reason) with how many VMIs
// failed for it, and the message of the first warning event of one of them, so that a run's
// notes say what went wrong without the cluster that ran it.
func failureReasons(ctx context.Context, e *Env, namespace string, failed map[string]string) string {
	warnings := map[string]string{}
	if e.KubeClient != nil {
		list, err := e.KubeClient.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=VirtualMachineInstance,type=" + corev1.EventTypeWarning})
		if err == nil {
			warnings = firstWarnings(list.Items)
		}
	}
	return summarizeFailures(failed, warnings)
}

// firstWarnings maps each involved object's name to the message of its earliest event.
func firstWarnings(events []corev1.Event) map[string]string {
	sort.SliceStable(events, func(i, j int) bool {
		return events[i].FirstTimestamp.Before(&events[j].FirstTimestamp)
	})
	out := map[string]string{}
	for _, ev := range events {
		if _, ok := out[ev.InvolvedObject.Name]; !ok {
			out[ev.InvolvedObject.Name] = strings.TrimSpace(ev.Message)
		}
	}
	return out
}

// summarizeFailures formats failed (VMI name → status reason) by reason, in name order, with
// one VMI's warning for each reason when there is one.
func summarizeFailures(failed, warnings map[string]string) string {
	names := make([]string, 0, len(failed))
	for n := range failed {
		names = append(names, n)
	}
	sort.Strings(names)
	var reasons []string
	count := map[string]int{}
	example := map[string]string{}
	for _, n := range names {
		r := failed[n]
		if r == "" {
			r = "no reason"
		}
		if count[r] == 0 {
			reasons = append(reasons, r)
		}
		count[r]++
		if _, ok := example[r]; !ok && warnings[n] != "" {
			example[r] = fmt.Sprintf("%s: %s", n, warnings[n])
		}
	}
	parts := make([]string, 0, len(reasons))
	for _, r := range reasons {
		p := fmt.Sprintf("%s: %d", r, count[r])
		if ex := example[r]; ex != "" {
			p += fmt.Sprintf(", e.g. %s", ex)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}
