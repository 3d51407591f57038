package apiserver

import (
	"fmt"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	uploadv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/upload/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/registry/cdi"
	"github.com/nativevirt/nativevirt/pkg/registry/uploadtokenrequest"
	"github.com/nativevirt/nativevirt/pkg/uploadtoken"
)

// installCDIGroups serves CDI's user-facing API: cdi.kubevirt.io/v1beta1 (DataVolumes,
// DataSources, StorageProfiles, CDIConfig; stored in the same etcd as kubevirt.io, in v1beta1)
// and upload.cdi.kubevirt.io/v1beta1 (UploadTokenRequests, answered with a token signed by key
// and never stored).
// authz decides CDI's clone authorization (create on datavolumes/source in the source namespace).
func installCDIGroups(s *genericapiserver.GenericAPIServer, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer,
	key uploadtoken.Key) error {
	storage, err := cdi.NewStorage(Scheme, optsGetter, authz)
	if err != nil {
		return err
	}
	group := groupInfo(cdiv1beta1.GroupName)
	group.VersionedResourcesStorageMap[cdiv1beta1.SchemeGroupVersion.Version] = storage
	if err := s.InstallAPIGroup(&group); err != nil {
		return fmt.Errorf("install %s: %w", cdiv1beta1.GroupName, err)
	}
	upload := groupInfo(uploadv1beta1.GroupName)
	upload.VersionedResourcesStorageMap[uploadv1beta1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"uploadtokenrequests": uploadtokenrequest.NewREST(key),
	}
	if err := s.InstallAPIGroup(&upload); err != nil {
		return fmt.Errorf("install %s: %w", uploadv1beta1.GroupName, err)
	}
	return nil
}
