// Package install registers NativeVirt's upload.cdi.kubevirt.io types into a scheme: v1beta1,
// whose Go types also serve as the internal version.
package install

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/nativevirt/nativevirt/pkg/apis/upload/v1beta1"
)

// InternalGroupVersion is upload.cdi.kubevirt.io/__internal.
var InternalGroupVersion = schema.GroupVersion{Group: v1beta1.GroupName, Version: runtime.APIVersionInternal}

// Install registers the types under upload.cdi.kubevirt.io/v1beta1 and the internal version.
func Install(scheme *runtime.Scheme) {
	InstallExternal(scheme)
	v1beta1.AddKnownTypesTo(scheme, InternalGroupVersion)
}

// InstallExternal registers only the external version (for the OpenAPI definition namer).
func InstallExternal(scheme *runtime.Scheme) {
	v1beta1.AddKnownTypesTo(scheme, v1beta1.SchemeGroupVersion)
	metav1.AddToGroupVersion(scheme, v1beta1.SchemeGroupVersion)
	utilruntime.Must(scheme.SetVersionPriority(v1beta1.SchemeGroupVersion))
}
