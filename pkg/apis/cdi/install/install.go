// Package install registers NativeVirt's cdi.kubevirt.io types into a scheme.
//
// The group has one served version, v1beta1, whose Go types also serve as the internal version
// (as those of kubevirt.io and instancetype.kubevirt.io do): no conversion functions are needed.
package install

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtinstall "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/install"
)

// InternalGroupVersion is cdi.kubevirt.io/__internal, the version objects are converted to
// inside the API server.
var InternalGroupVersion = schema.GroupVersion{Group: v1beta1.GroupName, Version: runtime.APIVersionInternal}

// ExternalGroupVersions are the served versions, preferred first.
var ExternalGroupVersions = []schema.GroupVersion{v1beta1.SchemeGroupVersion}

// FieldLabels lists, per kind, the field selectors the external version accepts; the registry's
// SelectableFields offer the same.
var FieldLabels = map[string][]string{
	v1beta1.DataVolumeKind:     {"metadata.name", "metadata.namespace", "status.phase"},
	v1beta1.DataSourceKind:     {"metadata.name", "metadata.namespace"},
	v1beta1.StorageProfileKind: {"metadata.name", "metadata.namespace"},
	v1beta1.CDIConfigKind:      {"metadata.name", "metadata.namespace"},
}

// Install registers the types under cdi.kubevirt.io/v1beta1 and the internal version, with
// their field label conversions, and prefers v1beta1.
func Install(scheme *runtime.Scheme) {
	InstallExternal(scheme)
	v1beta1.AddKnownTypesTo(scheme, InternalGroupVersion)
}

// InstallExternal registers only the external version (for the OpenAPI definition namer).
func InstallExternal(scheme *runtime.Scheme) {
	for _, gv := range ExternalGroupVersions {
		v1beta1.AddKnownTypesTo(scheme, gv)
		metav1.AddToGroupVersion(scheme, gv)
		utilruntime.Must(kubevirtinstall.AddFieldLabelConversions(scheme, gv, FieldLabels))
	}
	utilruntime.Must(scheme.SetVersionPriority(ExternalGroupVersions...))
}
