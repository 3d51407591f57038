package validation

import (
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// validateMultusNetwork checks a Multus network's NetworkAttachmentDefinition reference:
// "name" or "namespace/name", both DNS-1123 names as Kubernetes object names are.
func validateMultusNetwork(m *kubevirtv1.MultusNetwork, path *field.Path) field.ErrorList {
	p := path.Child("networkName")
	if m.NetworkName == "" {
		return field.ErrorList{field.Required(p, "CNI delegating plugin must have a networkName")}
	}
	parts := strings.Split(m.NetworkName, "/")
	if len(parts) > 2 {
		return field.ErrorList{field.Invalid(p, m.NetworkName, "must be <name> or <namespace>/<name>")}
	}
	var errs field.ErrorList
	for _, part := range parts {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(part) {
			errs = append(errs, field.Invalid(p, m.NetworkName, msg))
		}
	}
	return errs
}

// networkNamed is the network an interface attaches to, nil when there is none (reported by
// validateNetworking).
func networkNamed(networks []kubevirtv1.Network, name string) *kubevirtv1.Network {
	for i := range networks {
		if networks[i].Name == name {
			return &networks[i]
		}
	}
	return nil
}

// validateBindingOnNetwork pairs bindings with networks as KubeVirt does: masquerade only on the
// pod network (or a default Multus network, which takes its place); bridge on secondary Multus
// networks. KubeVirt also allows bridge on the pod network, where the guest takes the pod's own
// address and cannot migrate; NativeVirt refuses that combination.
func validateBindingOnNetwork(in *kubevirtv1.Interface, n *kubevirtv1.Network, ifPath *field.Path) field.ErrorList {
	m := &in.InterfaceBindingMethod
	set := 0
	for _, b := range []bool{m.Bridge != nil, m.Masquerade != nil, m.SRIOV != nil, m.DeprecatedSlirp != nil,
		m.DeprecatedMacvtap != nil, m.DeprecatedPasst != nil, in.Binding != nil} {
		if b {
			set++
		}
	}
	if n == nil || set > 1 || (n.Pod == nil) == (n.Multus == nil) {
		return nil // reported by validateNetworking, validateNetworkSource and validateBinding
	}
	primary := n.Pod != nil || (n.Multus != nil && n.Multus.Default)
	switch {
	case in.Masquerade != nil && !primary:
		return field.ErrorList{field.Invalid(ifPath.Child("masquerade"), in.Name,
			"Masquerade interface only implemented with pod network")}
	case in.Bridge != nil && primary:
		return field.ErrorList{field.Invalid(ifPath.Child("bridge"), in.Name,
			"the bridge binding on the pod network is not supported: the guest would take the pod's address and could not be live migrated; use masquerade")}
	case set == 0 && !primary:
		return field.ErrorList{field.Required(ifPath, "an interface on a Multus network needs a binding (bridge)")}
	}
	return nil
}
