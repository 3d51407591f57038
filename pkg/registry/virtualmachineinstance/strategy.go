// Package virtualmachineinstance stores VirtualMachineInstances: the rules of the main resource
// and /status, field selectors (status.phase, status.nodeName) and the `kubectl get` table.
package virtualmachineinstance

import (
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/validation"
	"github.com/nativevirt/nativevirt/pkg/registry/defaulting"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// Rules are the VirtualMachineInstance strategies' rules.
var Rules = store.Rules[*kubevirtv1.VirtualMachineInstance]{
	PrepareForCreate:       prepareForCreate,
	PrepareForUpdate:       prepareForUpdate,
	PrepareForStatusUpdate: prepareForStatusUpdate,
	Validate:               validation.ValidateVirtualMachineInstance,
	ValidateUpdate:         validation.ValidateVirtualMachineInstanceUpdate,
	ValidateStatusUpdate:   validation.ValidateVirtualMachineInstanceStatusUpdate,
}

// prepareForCreate clears status, starts the generation at 1, fixes the firmware UUID (an
// instance created by a VirtualMachine already carries the VM's) and adds the VMI controller's
// finalizer kubevirt.io/virtualMachineControllerFinalize, which it removes once no launcher pod
// of the instance is left. KubeVirt's virt-api mutating webhook adds its finalizer at creation
// too; here it saves the controller a PATCH per standalone instance (one write of a start).
func prepareForCreate(vmi *kubevirtv1.VirtualMachineInstance) {
	vmi.Status = kubevirtv1.VirtualMachineInstanceStatus{}
	vmi.Generation = 1
	defaulting.SetFirmwareUUID(&vmi.Spec, vmi.Namespace, vmi.Name, "")
	if !slices.Contains(vmi.Finalizers, kubevirtv1.VirtualMachineControllerFinalizer) {
		vmi.Finalizers = append(vmi.Finalizers, kubevirtv1.VirtualMachineControllerFinalizer)
	}
}

// prepareForUpdate keeps status; the spec is immutable (validation refuses changes), so the
// generation only moves if validation is ever relaxed.
func prepareForUpdate(newVMI, oldVMI *kubevirtv1.VirtualMachineInstance) {
	newVMI.Status = oldVMI.Status
	defaulting.SetFirmwareUUID(&newVMI.Spec, newVMI.Namespace, newVMI.Name, defaulting.FirmwareUUIDOf(&oldVMI.Spec))
	if !apiequality.Semantic.DeepEqual(newVMI.Spec, oldVMI.Spec) {
		newVMI.Generation = oldVMI.Generation + 1
	}
}

// prepareForStatusUpdate keeps everything but status as it was, and mirrors status into labels:
// status.nodeName into kubevirt.io/nodeName (`kubectl get vmi -l kubevirt.io/nodeName=...` as
// with KubeVirt), and the target node of a migration in progress into
// kubevirt.io/migrationTargetNodeName, which the target node's agent watches. The server keeps
// the labels in step, so no controller spends a write on them.
func prepareForStatusUpdate(newVMI, oldVMI *kubevirtv1.VirtualMachineInstance) {
	newVMI.Spec = oldVMI.Spec
	store.KeepMetadata(&newVMI.ObjectMeta, &oldVMI.ObjectMeta)
	newVMI.Labels = mirrorStatusLabels(newVMI.Labels, &newVMI.Status)
}

// mirrorStatusLabels returns labels with the status-derived labels in step with st. It never
// modifies labels (it is shared with the stored object): a change returns a copy.
func mirrorStatusLabels(labels map[string]string, st *kubevirtv1.VirtualMachineInstanceStatus) map[string]string {
	want := map[string]string{}
	if st.NodeName != "" {
		want[kubevirtv1.NodeNameLabel] = st.NodeName
	} else if node, ok := labels[kubevirtv1.NodeNameLabel]; ok {
		want[kubevirtv1.NodeNameLabel] = node // kept as it was: nodeName is never cleared
	}
	if ms := st.MigrationState; ms != nil && !ms.Completed && ms.TargetNode != "" {
		want[kubevirtv1.MigrationTargetNodeNameLabel] = ms.TargetNode
	}
	changed := false
	for _, k := range []string{kubevirtv1.NodeNameLabel, kubevirtv1.MigrationTargetNodeNameLabel} {
		v, has := labels[k]
		w, wants := want[k]
		if has != wants || v != w {
			changed = true
		}
	}
	if !changed {
		return labels
	}
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	delete(out, kubevirtv1.MigrationTargetNodeNameLabel)
	for k, v := range want {
		out[k] = v
	}
	return out
}

// SelectableFields are the fields a field selector may name. The node agent watches only the
// instances of its node through status.nodeName.
func SelectableFields(vmi *kubevirtv1.VirtualMachineInstance) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		"status.phase":    string(vmi.Status.Phase),
		"status.nodeName": vmi.Status.NodeName,
	}, &vmi.ObjectMeta, true)
}

// GetAttrs returns labels and selectable fields of a VirtualMachineInstance.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance)
	if !ok {
		return nil, nil, fmt.Errorf("not a VirtualMachineInstance: %T", obj)
	}
	return vmi.Labels, SelectableFields(vmi), nil
}
