package launcherpod

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// The instance's liveness and readiness probes are the compute container's: the kubelet runs
// them against the pod IP, and the masquerade binding carries them to the guest, as KubeVirt
// does. A failed readiness probe makes the pod, and so the instance (node agent), not Ready,
// which takes it out of the endpoints of the Services selecting it. A failed liveness probe
// makes the kubelet stop the launcher, which shuts the guest down: the instance fails, and a
// VirtualMachine's run strategy decides whether it starts again.

//
// exec and guestAgentPing probes run in the guest, through its QEMU guest agent: the container
// probe is an exec of the launcher binary (`--guest-probe`, pkg/node/launcher/guestprobe.go),
// which asks the pod's libvirtd to pass the command to the agent. It gets the instance's timeout
// and the kubelet one second more, so that the launcher reports a guest command that runs too
// long instead of being killed without a word.

// podProbe is the container probe of an instance's probe; nil for none.
func podProbe(p *kubevirtv1.Probe) *corev1.Probe {
	if p == nil {
		return nil
	}
	out := &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{
			HTTPGet:   p.HTTPGet.DeepCopy(),
			TCPSocket: p.TCPSocket.DeepCopy(),
		},
		InitialDelaySeconds: p.InitialDelaySeconds,
		TimeoutSeconds:      p.TimeoutSeconds,
		PeriodSeconds:       p.PeriodSeconds,
		SuccessThreshold:    p.SuccessThreshold,
		FailureThreshold:    p.FailureThreshold,
	}
	if p.Exec != nil || p.GuestAgentPing != nil {
		timeout := max(p.TimeoutSeconds, 1)
		cmd := []string{LauncherBinary, "--guest-probe", "--guest-probe-timeout", strconv.Itoa(int(timeout)) + "s"}
		if p.Exec != nil {
			cmd = append(append(cmd, "--"), p.Exec.Command...)
		}
		out.Exec = &corev1.ExecAction{Command: cmd}
		out.TimeoutSeconds = timeout + 1
	}
	return out
}

// containerPorts declares the ports of the pod network interface on the compute container, as
// KubeVirt does: Services and probes may then name them (targetPort: http).
func containerPorts(spec *kubevirtv1.VirtualMachineInstanceSpec) []corev1.ContainerPort {
	iface := kubevirtv1.PodNetworkInterface(spec)
	if iface == nil || len(iface.Ports) == 0 {
		return nil
	}
	out := make([]corev1.ContainerPort, 0, len(iface.Ports))
	for _, p := range iface.Ports {
		proto := corev1.ProtocolTCP
		if p.Protocol != "" {
			proto = corev1.Protocol(p.Protocol)
		}
		out = append(out, corev1.ContainerPort{Name: p.Name, ContainerPort: p.Port, Protocol: proto})
	}
	return out
}
