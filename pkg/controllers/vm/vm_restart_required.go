package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// SpecHashAnnotation on an instance is a hash of what it was made from: the VM's template,
// instance type and preference matchers. A running instance whose VM says something else by now
// needs a restart for the change to take effect (NativeVirt updates no running guest).
const SpecHashAnnotation = "nativevirt.io/vm-spec-hash"

// restartRequiredMessage is KubeVirt's message of the condition.
const restartRequiredMessage = "a non-live-updatable field was changed in the template spec"

// specHash hashes what a VM's instances are made from. Hotpluggable volumes and their disks
// are left out: a running instance gets them without a restart.
func specHash(vm *kubevirtv1.VirtualMachine) string {
	raw, err := json.Marshal(struct {
		Template     *kubevirtv1.VirtualMachineInstanceTemplateSpec `json:"template"`
		Instancetype *kubevirtv1.InstancetypeMatcher                `json:"instancetype"`
		Preference   *kubevirtv1.PreferenceMatcher                  `json:"preference"`
	}{withoutHotplugVolumes(vm.Spec.Template), vm.Spec.Instancetype, vm.Spec.Preference})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// restartRequired is KubeVirt's RestartRequired condition, when the VM's instance was made from
// another template or other matchers than the VM has now. It is only worked out when the VM's
// generation moved since the instance was made (most syncs hash nothing), and never for an
// instance made before the annotation existed.
func restartRequired(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) *kubevirtv1.VirtualMachineCondition {
	if vmi == nil || vmi.DeletionTimestamp != nil {
		return nil
	}
	made, ok := vmi.Annotations[SpecHashAnnotation]
	if !ok {
		return nil
	}
	if g, err := strconv.ParseInt(vmi.Annotations[GenerationAnnotation], 10, 64); err == nil && g == vm.Generation {
		return nil
	}
	if specHash(vm) == made {
		return nil
	}
	return &kubevirtv1.VirtualMachineCondition{Type: kubevirtv1.VirtualMachineRestartRequired,
		Status: corev1.ConditionTrue, Message: restartRequiredMessage}
}

// withoutHotplugVolumes returns t, or a copy of t without its hotpluggable volumes and their
// disks when it has any (so that the hash of a template without them stays what it was).
func withoutHotplugVolumes(t *kubevirtv1.VirtualMachineInstanceTemplateSpec) *kubevirtv1.VirtualMachineInstanceTemplateSpec {
	if t == nil || ownedHotplugVolumes(&t.Spec) == "" {
		return t
	}
	out := t.DeepCopy()
	hot := map[string]bool{}
	out.Spec.Volumes = out.Spec.Volumes[:0]
	for _, v := range t.Spec.Volumes {
		if kubevirtv1.IsHotpluggableVolume(&v) {
			hot[v.Name] = true
			continue
		}
		out.Spec.Volumes = append(out.Spec.Volumes, *v.DeepCopy())
	}
	out.Spec.Domain.Devices.Disks = out.Spec.Domain.Devices.Disks[:0]
	for _, d := range t.Spec.Domain.Devices.Disks {
		if !hot[d.Name] {
			out.Spec.Domain.Devices.Disks = append(out.Spec.Domain.Devices.Disks, *d.DeepCopy())
		}
	}
	return out
}
