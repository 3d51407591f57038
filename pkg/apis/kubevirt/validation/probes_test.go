package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func tcpProbe(port intstr.IntOrString) *kubevirtv1.Probe {
	return &kubevirtv1.Probe{Handler: kubevirtv1.Handler{TCPSocket: &corev1.TCPSocketAction{Port: port}}}
}

func httpProbe(port intstr.IntOrString) *kubevirtv1.Probe {
	return &kubevirtv1.Probe{Handler: kubevirtv1.Handler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: port}}}
}

// declarePorts gives the pod network interface ports.
func declarePorts(ports ...kubevirtv1.Port) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
	return iface0(func(i *kubevirtv1.Interface) { i.Ports = ports })
}

func TestValidateProbes(t *testing.T) {
	web := kubevirtv1.Port{Name: "web", Port: 8080}
	runSpecCases(t, []specCase{
		{"tcp readiness and http liveness on every forwarded port", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.ReadinessProbe = tcpProbe(intstr.FromInt32(22))
			s.LivenessProbe = httpProbe(intstr.FromInt32(80))
			s.LivenessProbe.InitialDelaySeconds, s.LivenessProbe.PeriodSeconds = 120, 20
		}, nil},
		{"a named port of the pod interface", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			declarePorts(web)(s)
			s.ReadinessProbe = httpProbe(intstr.FromString("web"))
			s.ReadinessProbe.HTTPGet.Scheme = corev1.URISchemeHTTPS
			s.ReadinessProbe.HTTPGet.HTTPHeaders = []corev1.HTTPHeader{{Name: "X-Probe", Value: "1"}}
		}, nil},
		{"a port the interface does not declare", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			declarePorts(web, kubevirtv1.Port{Port: 9090, Protocol: "UDP"})(s)
			s.ReadinessProbe = tcpProbe(intstr.FromInt32(9090))
			s.LivenessProbe = httpProbe(intstr.FromString("metrics"))
		}, []string{"Invalid:spec.readinessProbe.tcpSocket.port", "Invalid:spec.livenessProbe.httpGet.port"}},
		{"another host needs nothing of the guest", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks, s.Domain.Devices.Interfaces = nil, nil
			s.ReadinessProbe = tcpProbe(intstr.FromInt32(5432))
			s.ReadinessProbe.TCPSocket.Host = "db.example.com"
		}, nil},
		{"no pod network to reach the guest through", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks, s.Domain.Devices.Interfaces = nil, nil
			s.ReadinessProbe = tcpProbe(intstr.FromInt32(22))
		}, []string{"Invalid:spec.readinessProbe.tcpSocket"}},
		{"no handler", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.ReadinessProbe = &kubevirtv1.Probe{PeriodSeconds: 5}
		}, []string{"Required:spec.readinessProbe"}},
		{"two handlers", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.LivenessProbe = httpProbe(intstr.FromInt32(80))
			s.LivenessProbe.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(22)}
		}, []string{"Forbidden:spec.livenessProbe.tcpSocket"}},
		{"bad numbers, port, scheme and header", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.LivenessProbe = httpProbe(intstr.FromInt32(70000))
			s.LivenessProbe.HTTPGet.Scheme = "FTP"
			s.LivenessProbe.HTTPGet.HTTPHeaders = []corev1.HTTPHeader{{Name: "bad header"}}
			s.LivenessProbe.PeriodSeconds, s.LivenessProbe.TimeoutSeconds, s.LivenessProbe.SuccessThreshold = -1, -2, 2
			s.ReadinessProbe = tcpProbe(intstr.FromString("Not_A_Port"))
			s.ReadinessProbe.FailureThreshold, s.ReadinessProbe.InitialDelaySeconds = -1, -5
		}, []string{
			"Invalid:spec.livenessProbe.httpGet.port", "NotSupported:spec.livenessProbe.httpGet.scheme",
			"Invalid:spec.livenessProbe.httpGet.httpHeaders[0].name", "Invalid:spec.livenessProbe.periodSeconds",
			"Invalid:spec.livenessProbe.timeoutSeconds", "Invalid:spec.livenessProbe.successThreshold",
			"Invalid:spec.readinessProbe.tcpSocket.port", "Invalid:spec.readinessProbe.failureThreshold",
			"Invalid:spec.readinessProbe.initialDelaySeconds",
		}},
		{"a readiness probe may want several successes", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.ReadinessProbe = tcpProbe(intstr.FromInt32(22))
			s.ReadinessProbe.SuccessThreshold = 3
		}, nil},
		{"probes run in the guest by its agent", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Networks, s.Domain.Devices.Interfaces = nil, nil
			s.ReadinessProbe = &kubevirtv1.Probe{Handler: kubevirtv1.Handler{GuestAgentPing: &kubevirtv1.GuestAgentPing{}}}
			s.LivenessProbe = &kubevirtv1.Probe{Handler: kubevirtv1.Handler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}}}
		}, nil},
		{"an exec probe without a command", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.ReadinessProbe = &kubevirtv1.Probe{Handler: kubevirtv1.Handler{Exec: &corev1.ExecAction{}}}
		}, []string{"Required:spec.readinessProbe.exec.command"}},
	})
}

func TestValidateInterfacePortNames(t *testing.T) {
	runSpecCases(t, []specCase{
		{"named and unnamed ports", declarePorts(kubevirtv1.Port{Name: "http", Port: 80}, kubevirtv1.Port{Port: 22}), nil},
		{"a name a container port cannot have", declarePorts(kubevirtv1.Port{Name: "HTTP_alt", Port: 8080}),
			[]string{"Invalid:spec.domain.devices.interfaces[0].ports[0].name"}},
		{"the same name twice", declarePorts(kubevirtv1.Port{Name: "web", Port: 80}, kubevirtv1.Port{Name: "web", Port: 8080}),
			[]string{"Duplicate:spec.domain.devices.interfaces[0].ports[1].name"}},
	})
}
