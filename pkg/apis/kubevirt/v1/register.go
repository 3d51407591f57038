package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group served by NativeVirt, identical to KubeVirt's.
const GroupName = "kubevirt.io"

// SubresourceGroupName is the group under which KubeVirt serves subresources
// (start, stop, console, ...); NativeVirt serves the same paths.
const SubresourceGroupName = "subresources.kubevirt.io"

// SchemeGroupVersion is the preferred (and storage) version: kubevirt.io/v1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// V1alpha3GroupVersion is the older version still served with the same schema.
var V1alpha3GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha3"}

// SubresourceGroupVersion is subresources.kubevirt.io/v1.
var SubresourceGroupVersion = schema.GroupVersion{Group: SubresourceGroupName, Version: "v1"}

// Resource takes an unqualified resource name and returns a GroupResource in kubevirt.io.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

// Kind takes an unqualified kind and returns a GroupKind in kubevirt.io.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

var (
	// SchemeBuilder registers the types and their defaulters under
	// kubevirt.io/v1 and adds the meta/v1 helper types (ListOptions, Status,
	// ...) to that version.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes, addDefaultingFuncs)
	// AddToScheme applies SchemeBuilder to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	AddKnownTypesTo(scheme, SchemeGroupVersion)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// AddKnownTypesTo registers every kind of this package, including the
// subresource option bodies, under gv. Because the JSON of all served
// versions is identical, the same Go types can be registered under
// kubevirt.io/v1, kubevirt.io/v1alpha3 and the internal version.
func AddKnownTypesTo(scheme *runtime.Scheme, gv schema.GroupVersion) {
	scheme.AddKnownTypes(gv,
		&VirtualMachine{},
		&VirtualMachineList{},
		&VirtualMachineInstance{},
		&VirtualMachineInstanceList{},
		&VirtualMachineInstanceReplicaSet{},
		&VirtualMachineInstanceReplicaSetList{},
		&VirtualMachineInstanceMigration{},
		&VirtualMachineInstanceMigrationList{},
		&StartOptions{},
		&StopOptions{},
		&RestartOptions{},
		&MigrateOptions{},
		&PauseOptions{},
		&UnpauseOptions{},
		&AddVolumeOptions{},
		&RemoveVolumeOptions{},
		&VirtualMachineInstanceGuestAgentInfo{},
		&VirtualMachineInstanceGuestOSUserList{},
		&VirtualMachineInstanceFileSystemList{},
	)
}
