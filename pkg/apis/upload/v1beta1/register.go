package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is CDI's upload API group.
const GroupName = "upload.cdi.kubevirt.io"

// SchemeGroupVersion is the served version: upload.cdi.kubevirt.io/v1beta1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1beta1"}

// UploadTokenRequestKind is the kind of an upload token request.
const UploadTokenRequestKind = "UploadTokenRequest"

// Resource takes an unqualified resource name and returns a GroupResource in upload.cdi.kubevirt.io.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

// Kind takes an unqualified kind and returns a GroupKind in upload.cdi.kubevirt.io.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

var (
	// SchemeBuilder registers the types under upload.cdi.kubevirt.io/v1beta1 and adds the meta/v1
	// helper types to that version.
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
	scheme.AddKnownTypes(gv, &UploadTokenRequest{}, &UploadTokenRequestList{})
}
