package apiserver

import (
	"fmt"

	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/registry/instancetype"
)

// installInstancetypeGroup serves instancetype.kubevirt.io/v1beta1: instance types and
// preferences, namespaced and cluster-wide. They are stored in the same etcd as kubevirt.io, in
// v1beta1 (StorageVersions).
func installInstancetypeGroup(s *genericapiserver.GenericAPIServer, optsGetter generic.RESTOptionsGetter) error {
	storage, err := instancetype.NewStorage(Scheme, optsGetter)
	if err != nil {
		return err
	}
	group := groupInfo(instancetypev1beta1.GroupName)
	group.VersionedResourcesStorageMap[instancetypev1beta1.SchemeGroupVersion.Version] = storage
	if err := s.InstallAPIGroup(&group); err != nil {
		return fmt.Errorf("install %s: %w", instancetypev1beta1.GroupName, err)
	}
	return nil
}
