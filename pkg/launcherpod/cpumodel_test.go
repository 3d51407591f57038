package launcherpod

import (
	"testing"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// TestCPUModelNodeSelector: a named CPU model makes the launcher pod need a node labelled with
// it; the host's CPU (host-model, host-passthrough) and no model need none.
func TestCPUModelNodeSelector(t *testing.T) {
	for model, want := range map[string]string{
		"Nehalem": "cpu-model.node.kubevirt.io/Nehalem", "host-model": "", "host-passthrough": "", "": "",
	} {
		spec := &kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{CPU: &kubevirtv1.CPU{Model: model}}}
		sel := nodeSelector(spec)
		if got := CPUModelLabel(&spec.Domain); got != want {
			t.Errorf("model %q: label %q, want %q", model, got, want)
		}
		if want != "" && sel[want] != "true" {
			t.Errorf("model %q: node selector %v lacks %s", model, sel, want)
		}
		if want == "" && len(sel) != 1 {
			t.Errorf("model %q: node selector %v, want only %s", model, sel, SchedulableLabel)
		}
	}
	if sel := nodeSelector(&kubevirtv1.VirtualMachineInstanceSpec{}); len(sel) != 1 || sel[SchedulableLabel] != "true" {
		t.Errorf("no CPU: node selector %v", sel)
	}
}
