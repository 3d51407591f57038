// Package revision captures what a VirtualMachine's instance type and preference were when the VM
// first saw them, as KubeVirt does: a ControllerRevision (apps/v1, in the VM's namespace, owned by
// the VM) holding a copy of the object, named in the VM's status.instancetypeRef and
// status.preferenceRef. Later edits of the instance type then change no existing VM until its
// reference changes. It also finds the specs a VM's matchers name, from the revision when there
// is one and from the object itself otherwise.
package revision

import (
	"fmt"
	"strings"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// kindByName maps what a matcher's kind may say, lower-cased, to the kind it means. KubeVirt
// compares the matcher's kind case-insensitively with the singular and plural resource names
// (its defaulting writes the singular resource name, e.g. virtualmachineclusterinstancetype);
// the kind itself lower-cased is the singular resource name.
var kindByName = map[string]string{
	instancetypev1beta1.SingularResourceName:                  instancetypev1beta1.InstancetypeKind,
	instancetypev1beta1.PluralResourceName:                    instancetypev1beta1.InstancetypeKind,
	instancetypev1beta1.ClusterSingularResourceName:           instancetypev1beta1.ClusterInstancetypeKind,
	instancetypev1beta1.ClusterPluralResourceName:             instancetypev1beta1.ClusterInstancetypeKind,
	instancetypev1beta1.SingularPreferenceResourceName:        instancetypev1beta1.PreferenceKind,
	instancetypev1beta1.PluralPreferenceResourceName:          instancetypev1beta1.PreferenceKind,
	instancetypev1beta1.ClusterSingularPreferenceResourceName: instancetypev1beta1.ClusterPreferenceKind,
	instancetypev1beta1.ClusterPluralPreferenceResourceName:   instancetypev1beta1.ClusterPreferenceKind,
}

// InstancetypeKind is the kind an instance type matcher names, in canonical form:
// VirtualMachineInstancetype or VirtualMachineClusterInstancetype (also for an empty kind).
func InstancetypeKind(m *kubevirtv1.InstancetypeMatcher) (string, error) {
	return kindOfMatcher(m.Kind, instancetypev1beta1.InstancetypeKind, instancetypev1beta1.ClusterInstancetypeKind)
}

// PreferenceKind is the kind a preference matcher names, in canonical form:
// VirtualMachinePreference or VirtualMachineClusterPreference (also for an empty kind).
func PreferenceKind(m *kubevirtv1.PreferenceMatcher) (string, error) {
	return kindOfMatcher(m.Kind, instancetypev1beta1.PreferenceKind, instancetypev1beta1.ClusterPreferenceKind)
}

func kindOfMatcher(kind, namespaced, cluster string) (string, error) {
	if kind == "" {
		return cluster, nil
	}
	if k := kindByName[strings.ToLower(kind)]; k == namespaced || k == cluster {
		return k, nil
	}
	return "", fmt.Errorf("unknown kind %q: expected %s or %s", kind, namespaced, cluster)
}

// Matches reports whether a status reference records a revision of the object name of kind
// (kinds compared as a matcher's are).
func Matches(ref *kubevirtv1.InstancetypeStatusRef, name, kind string) bool {
	return ref != nil && ref.Name == name && ref.ControllerRevisionRef != nil && ref.ControllerRevisionRef.Name != "" &&
		kindByName[strings.ToLower(ref.Kind)] != "" && kindByName[strings.ToLower(ref.Kind)] == kindByName[strings.ToLower(kind)]
}
