// Package install registers NativeVirt's kubevirt.io types into a scheme.
//
// The JSON of kubevirt.io/v1 and kubevirt.io/v1alpha3 is identical, so one
// set of Go types (package v1) serves both versions and the internal version
// alike; no conversion functions are needed.
package install

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	v1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// InternalGroupVersion is kubevirt.io/__internal, the version objects are
// converted to inside the API server.
var InternalGroupVersion = schema.GroupVersion{Group: v1.GroupName, Version: runtime.APIVersionInternal}

// ExternalGroupVersions are the served versions, preferred first.
var ExternalGroupVersions = []schema.GroupVersion{v1.SchemeGroupVersion, v1.V1alpha3GroupVersion}

// FieldLabels lists, per kind, the field selectors each external version
// accepts. The registry's SelectableFields must offer the same labels.
var FieldLabels = map[string][]string{
	"VirtualMachine":                   {"metadata.name", "metadata.namespace", "status.printableStatus", "status.ready"},
	"VirtualMachineInstance":           {"metadata.name", "metadata.namespace", "status.phase", "status.nodeName"},
	"VirtualMachineInstanceReplicaSet": {"metadata.name", "metadata.namespace"},
	"VirtualMachineInstanceMigration":  {"metadata.name", "metadata.namespace", "spec.vmiName", "status.phase"},
}

// Install registers the types under kubevirt.io/v1, kubevirt.io/v1alpha3 and
// the internal version, together with their defaulters and field label
// conversions, and prefers v1.
func Install(scheme *runtime.Scheme) {
	// External versions first: code that takes the first of an object's
	// kinds then sees kubevirt.io/v1, not the internal version.
	InstallExternal(scheme)
	AddTypes(scheme, InternalGroupVersion)
}

// InstallExternal registers only the external versions (kubevirt.io/v1 and
// kubevirt.io/v1alpha3). A scheme built this way names OpenAPI definitions
// without the internal version leaking into x-kubernetes-group-version-kind.
func InstallExternal(scheme *runtime.Scheme) {
	utilruntime.Must(v1.RegisterDefaults(scheme))
	for _, gv := range ExternalGroupVersions {
		AddTypes(scheme, gv)
		metav1.AddToGroupVersion(scheme, gv)
		utilruntime.Must(AddFieldLabelConversions(scheme, gv, FieldLabels))
	}
	utilruntime.Must(scheme.SetVersionPriority(ExternalGroupVersions...))
}

// AddTypes registers the Go types of package v1 under gv.
func AddTypes(scheme *runtime.Scheme, gv schema.GroupVersion) {
	v1.AddKnownTypesTo(scheme, gv)
}

// AddFieldLabelConversions makes scheme accept, for each kind of gv in fieldLabels, exactly the
// listed field selector labels; a list naming another label is refused. The
// instancetype.kubevirt.io group registers its kinds with it too.
func AddFieldLabelConversions(scheme *runtime.Scheme, gv schema.GroupVersion, fieldLabels map[string][]string) error {
	for kind, labels := range fieldLabels {
		supported := make(map[string]bool, len(labels))
		for _, l := range labels {
			supported[l] = true
		}
		convert := func(label, value string) (string, string, error) {
			if !supported[label] {
				return "", "", fmt.Errorf("field label not supported: %s", label)
			}
			return label, value, nil
		}
		if err := scheme.AddFieldLabelConversionFunc(gv.WithKind(kind), convert); err != nil {
			return err
		}
	}
	return nil
}
