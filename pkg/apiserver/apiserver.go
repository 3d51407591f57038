// Package apiserver assembles nativevirt-apiserver: the kubevirt.io API group (v1 and v1alpha3),
// the instancetype.kubevirt.io group (v1beta1) and CDI's cdi.kubevirt.io and
// upload.cdi.kubevirt.io groups (v1beta1) on k8s.io/apiserver, backed by the registries in
// pkg/registry, plus the discovery of the subresources.kubevirt.io group that KubeVirt's virtctl
// talks to.
package apiserver

import (
	"context"
	"crypto/tls"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/instancetype/revision"
	"github.com/nativevirt/nativevirt/pkg/registry/instancetype"
	"github.com/nativevirt/nativevirt/pkg/registry/virtualmachine"
	"github.com/nativevirt/nativevirt/pkg/registry/virtualmachineinstance"
	"github.com/nativevirt/nativevirt/pkg/registry/virtualmachineinstancemigration"
	"github.com/nativevirt/nativevirt/pkg/registry/virtualmachineinstancereplicaset"
	"github.com/nativevirt/nativevirt/pkg/uploadtoken"
)

// ExtraConfig holds NativeVirt's own settings beyond the generic server's.
type ExtraConfig struct {
	// KubeClient reaches the Kubernetes API: Nodes (node agent endpoints) and launcher Pods
	// (force stop and restart). Nil in standalone mode; what needs it then answers 503.
	KubeClient kubernetes.Interface
	// NodeAgentTLS is the mutual TLS client configuration towards node agents (see package
	// streams). Nil: console, vnc, pause, unpause and softreboot answer 503.
	NodeAgentTLS *tls.Config
	// UploadTokenKey signs the tokens of UploadTokenRequests; the upload proxy verifies them with
	// the same key. Zero: a key is generated when the server is built (one replica only).
	UploadTokenKey uploadtoken.Key
	// UploadProxyAddress is where CDI's upload proxy listens (HTTPS, the serving certificate);
	// empty: no upload proxy.
	UploadProxyAddress string
}

// Config is the whole server configuration.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	ExtraConfig   ExtraConfig
}

// Server is a running nativevirt-apiserver.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
}

type completedConfig struct {
	GenericConfig genericapiserver.CompletedConfig
	ExtraConfig   *ExtraConfig
}

// CompletedConfig is a Config with every default filled in; only Complete makes one.
type CompletedConfig struct {
	*completedConfig
}

// Complete fills in defaults; it mutates the receiver.
func (cfg *Config) Complete() CompletedConfig {
	cfg.GenericConfig.LongRunningFunc = LongRunningRequestCheck()
	return CompletedConfig{&completedConfig{
		GenericConfig: cfg.GenericConfig.Complete(),
		ExtraConfig:   &cfg.ExtraConfig,
	}}
}

// New builds the server with its API groups installed: kubevirt.io, subresources.kubevirt.io,
// instancetype.kubevirt.io, cdi.kubevirt.io and upload.cdi.kubevirt.io.
func (c completedConfig) New() (*Server, error) {
	generic, err := c.GenericConfig.New("nativevirt-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	s := &Server{GenericAPIServer: generic}

	// Instance types first: admitting a VirtualMachine reads the ones it names.
	itStorage, err := instancetype.NewStorage(Scheme, c.GenericConfig.RESTOptionsGetter)
	if err != nil {
		return nil, err
	}
	getters, err := instancetypeGetters(itStorage, c.ExtraConfig.KubeClient)
	if err != nil {
		return nil, err
	}
	acts, err := installKubevirtGroup(generic, c.GenericConfig.RESTOptionsGetter, c.ExtraConfig, getters, c.GenericConfig.Authorization.Authorizer)
	if err != nil {
		return nil, err
	}
	if err := installSubresourcesGroup(generic, acts); err != nil {
		return nil, err
	}
	if err := installInstancetypeGroup(generic, itStorage); err != nil {
		return nil, err
	}
	key := c.ExtraConfig.UploadTokenKey
	if key.IsZero() {
		if key, err = uploadtoken.NewKey(); err != nil {
			return nil, err
		}
	}
	if err := installCDIGroups(generic, c.GenericConfig.RESTOptionsGetter, c.GenericConfig.Authorization.Authorizer, key); err != nil {
		return nil, err
	}
	if addr := c.ExtraConfig.UploadProxyAddress; addr != "" {
		var cert dynamiccertificates.CertKeyContentProvider
		if c.GenericConfig.SecureServing != nil {
			cert = c.GenericConfig.SecureServing.Cert
		}
		if err := installUploadProxy(generic, addr, cert, key, c.ExtraConfig.KubeClient); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// installKubevirtGroup serves kubevirt.io/v1 and v1alpha3 and returns the actions that are also
// served under subresources.kubevirt.io.
func installKubevirtGroup(s *genericapiserver.GenericAPIServer, optsGetter generic.RESTOptionsGetter, extra *ExtraConfig,
	instancetypes *revision.Getters, authz authorizer.Authorizer) (*actions, error) {
	storage, acts, err := kubevirtStorage(optsGetter, extra, instancetypes, authz)
	if err != nil {
		return nil, err
	}
	group := kubevirtGroupInfo()
	// v1alpha3 has the same schema as v1 (as in KubeVirt); both serve the same storage, which
	// stores v1.
	group.VersionedResourcesStorageMap[kubevirtv1.SchemeGroupVersion.Version] = storage
	group.VersionedResourcesStorageMap[kubevirtv1.V1alpha3GroupVersion.Version] = storage
	if err := s.InstallAPIGroup(&group); err != nil {
		return nil, fmt.Errorf("install %s: %w", kubevirtv1.GroupName, err)
	}
	return acts, nil
}

// kubevirtGroupInfo is the kubevirt.io group without its storage.
func kubevirtGroupInfo() genericapiserver.APIGroupInfo {
	return groupInfo(kubevirtv1.GroupName)
}

// groupInfo is an API group of this server without its storage, encoding JSON and YAML only.
// NewDefaultAPIGroupInfo's serializers encode a list item by item straight into the response
// (k8s.io/apiserver's StreamingCollectionEncodingToJSON); those of Codecs would encode the whole
// list into one buffer first, ~100 MB for 10,000 VirtualMachines, which encoding/json then keeps
// in its pool.
func groupInfo(name string) genericapiserver.APIGroupInfo {
	group := genericapiserver.NewDefaultAPIGroupInfo(name, Scheme, metav1.ParameterCodec, Codecs)
	group.NegotiatedSerializer = onlyJSONAndYAML(group.NegotiatedSerializer)
	return group
}

// kubevirtStorage builds the REST storage of every kubevirt.io resource and subresource, and the
// action subresources that are also served under subresources.kubevirt.io. instancetypes reads
// what VirtualMachines name for their admission (nil: not checked); authz decides the clone
// authorization of their dataVolumeTemplates (nil: not checked).
func kubevirtStorage(optsGetter generic.RESTOptionsGetter, extra *ExtraConfig, instancetypes *revision.Getters,
	authz authorizer.Authorizer) (map[string]rest.Storage, *actions, error) {
	var claims virtualmachine.ClaimGetter
	if extra.KubeClient != nil {
		claims = func(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error) {
			return extra.KubeClient.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, metav1.GetOptions{})
		}
	}
	vm, err := virtualmachine.NewStorage(Scheme, optsGetter, instancetypes, claims)
	if err != nil {
		return nil, nil, err
	}
	vm.AuthorizeClonesWith(authz)
	vmi, err := virtualmachineinstance.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, nil, err
	}
	rs, err := virtualmachineinstancereplicaset.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, nil, err
	}
	mig, err := virtualmachineinstancemigration.NewStorage(Scheme, optsGetter, vmi.VirtualMachineInstance)
	if err != nil {
		return nil, nil, err
	}
	storage := map[string]rest.Storage{
		"virtualmachines":                          vm.VirtualMachine,
		"virtualmachines/status":                   vm.Status,
		"virtualmachineinstances":                  vmi.VirtualMachineInstance,
		"virtualmachineinstances/status":           vmi.Status,
		"virtualmachineinstancereplicasets":        rs.ReplicaSet,
		"virtualmachineinstancereplicasets/status": rs.Status,
		"virtualmachineinstancereplicasets/scale":  rs.Scale,
		"virtualmachineinstancemigrations":         mig.Migration,
		"virtualmachineinstancemigrations/status":  mig.Status,
	}
	acts := newActions(vm, vmi, mig, extra, instancetypes)
	acts.addTo(storage)
	return storage, acts, nil
}
