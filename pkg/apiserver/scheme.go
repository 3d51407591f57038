package apiserver

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	cdiinstall "github.com/nativevirt/nativevirt/pkg/apis/cdi/install"
	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	instancetypeinstall "github.com/nativevirt/nativevirt/pkg/apis/instancetype/install"
	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/install"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	uploadinstall "github.com/nativevirt/nativevirt/pkg/apis/upload/install"
)

var (
	// Scheme knows every type the server serves: kubevirt.io (v1, v1alpha3 and the internal version),
	// instancetype.kubevirt.io, cdi.kubevirt.io and upload.cdi.kubevirt.io (v1beta1 and the
	// internal version), autoscaling/v1 Scale for the replica set's /scale, and the unversioned
	// meta types.
	Scheme = runtime.NewScheme()
	// Codecs encodes and decodes Scheme's types.
	Codecs = serializer.NewCodecFactory(Scheme)

	// servedScheme holds only the external versions. The OpenAPI definition namer reads group,
	// version and kind from it, so the published x-kubernetes-group-version-kind never names
	// the internal version.
	servedScheme = runtime.NewScheme()

	// StorageVersions are the versions objects are written to etcd in, one per stored group:
	// kubevirt.io/v1 (whatever version a client wrote), instancetype.kubevirt.io/v1beta1 and
	// cdi.kubevirt.io/v1beta1 (upload.cdi.kubevirt.io stores nothing).
	StorageVersions = schema.GroupVersions{kubevirtv1.SchemeGroupVersion, instancetypev1beta1.SchemeGroupVersion,
		cdiv1beta1.SchemeGroupVersion}
)

func init() {
	install.Install(Scheme)
	install.InstallExternal(servedScheme)
	instancetypeinstall.Install(Scheme)
	instancetypeinstall.InstallExternal(servedScheme)
	cdiinstall.Install(Scheme)
	cdiinstall.InstallExternal(servedScheme)
	uploadinstall.Install(Scheme)
	uploadinstall.InstallExternal(servedScheme)
	utilruntime.Must(addScale(Scheme))
	utilruntime.Must(autoscalingv1.AddToScheme(servedScheme))

	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	Scheme.AddUnversionedTypes(unversioned,
		&metav1.Status{},
		&metav1.APIVersions{},
		&metav1.APIGroupList{},
		&metav1.APIGroup{},
		&metav1.APIResourceList{},
	)
}

// addScale registers autoscaling/v1 Scale as both the external and the internal version of
// autoscaling. The request handler decodes a subresource body into its group's internal version;
// using the same Go type for both needs no conversion functions.
func addScale(s *runtime.Scheme) error {
	internal := schema.GroupVersion{Group: autoscalingv1.GroupName, Version: runtime.APIVersionInternal}
	s.AddKnownTypes(internal, &autoscalingv1.Scale{})
	s.AddKnownTypes(autoscalingv1.SchemeGroupVersion, &autoscalingv1.Scale{})
	metav1.AddToGroupVersion(s, autoscalingv1.SchemeGroupVersion)
	return nil
}
