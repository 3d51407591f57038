// Package revision captures what a VirtualMachine's instance type and preference were when the VM
// first saw them, as KubeVirt does: a ControllerRevision (apps/v1, in the VM's namespace, owned by
// the VM) holding a copy of the object, named in the VM's status.instancetypeRef and
// status.preferenceRef. Later edits of the instance type then change no existing VM until its
// reference changes. It also finds the specs a VM's matchers name, from the revision when there
// is one and from the object itself otherwise.
package revision

import (
	"fmt"
	"slices"
	"strings"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// InstancetypeKind is the kind a matcher names, in canonical form: VirtualMachineInstancetype or
// VirtualMachineClusterInstancetype. KubeVirt compares the matcher's kind case-insensitively with
// the singular and plural resource names, and an empty kind means the cluster-wide one.
func InstancetypeKind(m *kubevirtv1.InstancetypeMatcher) (string, error) {
	return canonicalKind(m.Kind, instancetypev1beta1.ClusterInstancetypeKind, map[string]string{
		instancetypev1beta1.SingularResourceName:        instancetypev1beta1.InstancetypeKind,
		instancetypev1beta1.PluralResourceName:          instancetypev1beta1.InstancetypeKind,
		instancetypev1beta1.ClusterSingularResourceName: instancetypev1beta1.ClusterInstancetypeKind,
		instancetypev1beta1.ClusterPluralResourceName:   instancetypev1beta1.ClusterInstancetypeKind,
	})
}

// PreferenceKind is InstancetypeKind for a preference matcher: VirtualMachinePreference or
// VirtualMachineClusterPreference.
func PreferenceKind(m *kubevirtv1.PreferenceMatcher) (string, error) {
	return canonicalKind(m.Kind, instancetypev1beta1.ClusterPreferenceKind, map[string]string{
		instancetypev1beta1.SingularPreferenceResourceName:        instancetypev1beta1.PreferenceKind,
		instancetypev1beta1.PluralPreferenceResourceName:          instancetypev1beta1.PreferenceKind,
		instancetypev1beta1.ClusterSingularPreferenceResourceName: instancetypev1beta1.ClusterPreferenceKind,
		instancetypev1beta1.ClusterPluralPreferenceResourceName:   instancetypev1beta1.ClusterPreferenceKind,
	})
}

func canonicalKind(kind, empty string, byName map[string]string) (string, error) {
	if kind == "" {
		return empty, nil
	}
	if k, ok := byName[strings.ToLower(kind)]; ok {
		return k, nil
	}
	var kinds []string
	for _, k := range byName {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	return "", fmt.Errorf("unknown kind %q: expected %s", kind, strings.Join(kinds, " or "))
}
