package launcherpod

import (
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// CPUModelLabelPrefix prefixes the node labels that name the CPU models a node's QEMU can give
// guests (value "true"), as KubeVirt's node labeller writes them: cpu-model.node.kubevirt.io/Nehalem.
const CPUModelLabelPrefix = "cpu-model.node.kubevirt.io/"

// CPUModelLabel is the node label a guest's named CPU model needs; "" when the guest takes the
// host's CPU (host-model, host-passthrough) or names no model.
func CPUModelLabel(spec *kubevirtv1.DomainSpec) string {
	if spec.CPU == nil {
		return ""
	}
	switch m := spec.CPU.Model; m {
	case "", kubevirtv1.CPUModeHostModel, kubevirtv1.CPUModeHostPassthrough:
		return ""
	default:
		return CPUModelLabelPrefix + m
	}
}
