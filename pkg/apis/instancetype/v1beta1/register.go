package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of instance types and preferences, identical to KubeVirt's.
const GroupName = "instancetype.kubevirt.io"

// SchemeGroupVersion is the served (and storage) version: instancetype.kubevirt.io/v1beta1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1beta1"}

// The kinds of the group, as a VirtualMachine's spec.instancetype.kind and spec.preference.kind
// name them.
const (
	SingularResourceName                  = "virtualmachineinstancetype"
	PluralResourceName                    = "virtualmachineinstancetypes"
	ClusterSingularResourceName           = "virtualmachineclusterinstancetype"
	ClusterPluralResourceName             = "virtualmachineclusterinstancetypes"
	SingularPreferenceResourceName        = "virtualmachinepreference"
	PluralPreferenceResourceName          = "virtualmachinepreferences"
	ClusterSingularPreferenceResourceName = "virtualmachineclusterpreference"
	ClusterPluralPreferenceResourceName   = "virtualmachineclusterpreferences"

	InstancetypeKind        = "VirtualMachineInstancetype"
	ClusterInstancetypeKind = "VirtualMachineClusterInstancetype"
	PreferenceKind          = "VirtualMachinePreference"
	ClusterPreferenceKind   = "VirtualMachineClusterPreference"
)

// Resource takes an unqualified resource name and returns a GroupResource in instancetype.kubevirt.io.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

// Kind takes an unqualified kind and returns a GroupKind in instancetype.kubevirt.io.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

var (
	// SchemeBuilder registers the types under instancetype.kubevirt.io/v1beta1 and adds the
	// meta/v1 helper types (ListOptions, Status, ...) to that version.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme applies SchemeBuilder to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	AddKnownTypesTo(scheme, SchemeGroupVersion)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// AddKnownTypesTo registers every kind of this package under gv (v1beta1 or the internal version).
func AddKnownTypesTo(scheme *runtime.Scheme, gv schema.GroupVersion) {
	scheme.AddKnownTypes(gv,
		&VirtualMachineInstancetype{},
		&VirtualMachineInstancetypeList{},
		&VirtualMachineClusterInstancetype{},
		&VirtualMachineClusterInstancetypeList{},
		&VirtualMachinePreference{},
		&VirtualMachinePreferenceList{},
		&VirtualMachineClusterPreference{},
		&VirtualMachineClusterPreferenceList{},
	)
}
