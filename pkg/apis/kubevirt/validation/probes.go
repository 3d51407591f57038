package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// httpSchemes are the schemes an httpGet probe may use (the kubelet's).
var httpSchemes = []corev1.URIScheme{corev1.URISchemeHTTP, corev1.URISchemeHTTPS}

// validateProbes checks livenessProbe and readinessProbe. httpGet and tcpSocket probes become
// the launcher pod's probes: the kubelet connects to the pod IP, and the masquerade binding
// carries the connection to the guest. So a probe without a host needs an interface on the pod
// network, and a port that interface forwards; anything else would never succeed, which for a
// liveness probe means a guest stopped again and again.
func validateProbes(spec *kubevirtv1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	podIface := kubevirtv1.PodNetworkInterface(spec)
	if p := spec.LivenessProbe; p != nil {
		path := fldPath.Child("livenessProbe")
		errs = append(errs, validateProbe(p, podIface, path)...)
		if p.SuccessThreshold > 1 {
			errs = append(errs, field.Invalid(path.Child("successThreshold"), p.SuccessThreshold, "must be 1 for a liveness probe"))
		}
	}
	if p := spec.ReadinessProbe; p != nil {
		errs = append(errs, validateProbe(p, podIface, fldPath.Child("readinessProbe"))...)
	}
	return errs
}

// validateProbe checks one probe: exactly one handler, non-negative numbers, and the handler.
func validateProbe(p *kubevirtv1.Probe, podIface *kubevirtv1.Interface, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	handlers := []struct {
		name string
		set  bool
	}{
		{"exec", p.Exec != nil},
		{"guestAgentPing", p.GuestAgentPing != nil},
		{"httpGet", p.HTTPGet != nil},
		{"tcpSocket", p.TCPSocket != nil},
	}
	first := ""
	for _, h := range handlers {
		switch {
		case !h.set:
		case first == "":
			first = h.name
		default:
			errs = append(errs, field.Forbidden(path.Child(h.name), "may not be set together with "+first+": a probe has one handler"))
		}
	}
	if first == "" {
		errs = append(errs, field.Required(path, "one of exec, guestAgentPing, httpGet and tcpSocket must be set"))
	}
	for _, n := range []struct {
		name  string
		value int32
	}{
		{"initialDelaySeconds", p.InitialDelaySeconds},
		{"timeoutSeconds", p.TimeoutSeconds},
		{"periodSeconds", p.PeriodSeconds},
		{"successThreshold", p.SuccessThreshold},
		{"failureThreshold", p.FailureThreshold},
	} {
		if n.value < 0 {
			errs = append(errs, field.Invalid(path.Child(n.name), n.value, "must be greater than or equal to 0"))
		}
	}
	if h := p.HTTPGet; h != nil {
		hPath := path.Child("httpGet")
		errs = append(errs, validateProbePort(h.Port, h.Host, podIface, hPath)...)
		if h.Scheme != "" && !contains(httpSchemes, h.Scheme) {
			errs = append(errs, field.NotSupported(hPath.Child("scheme"), h.Scheme, httpSchemes))
		}
		for i, header := range h.HTTPHeaders {
			for _, msg := range utilvalidation.IsHTTPHeaderName(header.Name) {
				errs = append(errs, field.Invalid(hPath.Child("httpHeaders").Index(i).Child("name"), header.Name, msg))
			}
		}
	}
	if t := p.TCPSocket; t != nil {
		errs = append(errs, validateProbePort(t.Port, t.Host, podIface, path.Child("tcpSocket"))...)
	}
	if e := p.Exec; e != nil && len(e.Command) == 0 {
		errs = append(errs, field.Required(path.Child("exec", "command"), "the command to run in the guest"))
	}
	return errs
}

// validateProbePort checks the port of an httpGet or tcpSocket probe: a number, or the name of a
// port the pod network interface declares (the launcher pod declares them as its container's
// ports, where the kubelet looks names up). Without a host the guest must get the port.
func validateProbePort(port intstr.IntOrString, host string, podIface *kubevirtv1.Interface, path *field.Path) field.ErrorList {
	portPath := path.Child("port")
	var number int32
	switch port.Type {
	case intstr.Int:
		if port.IntVal < 1 || port.IntVal > 65535 {
			return field.ErrorList{field.Invalid(portPath, port.IntVal, "must be between 1 and 65535, inclusive")}
		}
		number = port.IntVal
	default:
		if msgs := utilvalidation.IsValidPortName(port.StrVal); len(msgs) > 0 {
			return field.ErrorList{field.Invalid(portPath, port.StrVal, msgs[0])}
		}
		p := declaredPort(podIface, func(p kubevirtv1.Port) bool { return p.Name == port.StrVal })
		if p == nil {
			return field.ErrorList{field.Invalid(portPath, port.StrVal,
				"must name a port of the interface on the pod network (spec.domain.devices.interfaces[*].ports[*].name)")}
		}
		number = p.Port
	}
	if host != "" {
		return nil // another address than the guest's: nothing to check here
	}
	switch {
	case podIface == nil:
		return field.ErrorList{field.Invalid(path, port.String(),
			"the probe reaches the guest on the pod IP: the instance needs an interface on the pod network, or set host")}
	case len(podIface.Ports) > 0 && declaredPort(podIface, func(p kubevirtv1.Port) bool {
		return p.Port == number && (p.Protocol == "" || p.Protocol == "TCP")
	}) == nil:
		return field.ErrorList{field.Invalid(portPath, port.String(), fmt.Sprintf(
			"interface %s declares ports, and only those reach the guest: declare TCP port %d in its ports", podIface.Name, number))}
	}
	return nil
}

// declaredPort returns the first port of iface that match accepts, or nil.
func declaredPort(iface *kubevirtv1.Interface, match func(kubevirtv1.Port) bool) *kubevirtv1.Port {
	if iface == nil {
		return nil
	}
	for i := range iface.Ports {
		if match(iface.Ports[i]) {
			return &iface.Ports[i]
		}
	}
	return nil
}
