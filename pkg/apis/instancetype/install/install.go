// Package install registers NativeVirt's instancetype.kubevirt.io types into a scheme.
//
// The group has one served version, v1beta1, and its Go types also serve as the internal
// version (as those of kubevirt.io do, see pkg/apis/kubevirt/install): no conversion functions
// are needed.
package install

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtinstall "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/install"
)

// InternalGroupVersion is instancetype.kubevirt.io/__internal, the version objects are
// converted to inside the API server.
var InternalGroupVersion = schema.GroupVersion{Group: v1beta1.GroupName, Version: runtime.APIVersionInternal}

// ExternalGroupVersions are the served versions, preferred first.
var ExternalGroupVersions = []schema.GroupVersion{v1beta1.SchemeGroupVersion}

// FieldLabels lists, per kind, the field selectors the external version accepts. The registry's
// SelectableFields offer the same labels (cluster-scoped objects have no namespace, so a
// metadata.namespace selector matches them only when it asks for the empty namespace, as for
// the cluster-scoped objects of a CRD).
var FieldLabels = map[string][]string{
	v1beta1.InstancetypeKind:        {"metadata.name", "metadata.namespace"},
	v1beta1.ClusterInstancetypeKind: {"metadata.name", "metadata.namespace"},
	v1beta1.PreferenceKind:          {"metadata.name", "metadata.namespace"},
	v1beta1.ClusterPreferenceKind:   {"metadata.name", "metadata.namespace"},
}

// Install registers the types under instancetype.kubevirt.io/v1beta1 and the internal version,
// with their field label conversions, and prefers v1beta1.
func Install(scheme *runtime.Scheme) {
	// The external version first: code that takes the first of an object's kinds then sees
	// v1beta1, not the internal version.
	InstallExternal(scheme)
	v1beta1.AddKnownTypesTo(scheme, InternalGroupVersion)
}

// InstallExternal registers only the external version. A scheme built this way names OpenAPI
// definitions without the internal version leaking into x-kubernetes-group-version-kind.
func InstallExternal(scheme *runtime.Scheme) {
	for _, gv := range ExternalGroupVersions {
		v1beta1.AddKnownTypesTo(scheme, gv)
		metav1.AddToGroupVersion(scheme, gv)
		utilruntime.Must(kubevirtinstall.AddFieldLabelConversions(scheme, gv, FieldLabels))
	}
	utilruntime.Must(scheme.SetVersionPriority(ExternalGroupVersions...))
}
