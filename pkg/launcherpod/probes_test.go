package launcherpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// TestGuestProbes: exec and guestAgentPing probes become an exec of the launcher's guest probe
// in the compute container, with the instance's timeout for the launcher and one second more
// for the kubelet; the other settings pass through.
func TestGuestProbes(t *testing.T) {
	tests := []struct {
		name  string
		probe kubevirtv1.Probe
		want  corev1.Probe
	}{{
		name:  "guest agent ping, default timeout",
		probe: kubevirtv1.Probe{Handler: kubevirtv1.Handler{GuestAgentPing: &kubevirtv1.GuestAgentPing{}}, PeriodSeconds: 10, InitialDelaySeconds: 120},
		want: corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{
			LauncherBinary, "--guest-probe", "--guest-probe-timeout", "1s"}}},
			TimeoutSeconds: 2, PeriodSeconds: 10, InitialDelaySeconds: 120},
	}, {
		name: "exec with a timeout",
		probe: kubevirtv1.Probe{Handler: kubevirtv1.Handler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}},
			TimeoutSeconds: 5, FailureThreshold: 3, SuccessThreshold: 2},
		want: corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{
			LauncherBinary, "--guest-probe", "--guest-probe-timeout", "5s", "--", "cat", "/tmp/healthy"}}},
			TimeoutSeconds: 6, FailureThreshold: 3, SuccessThreshold: 2},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(&tt.want, podProbe(&tt.probe)); diff != "" {
				t.Errorf("container probe (-want +got):\n%s", diff)
			}
		})
	}
	if podProbe(nil) != nil {
		t.Error("no probe became a container probe")
	}
}
