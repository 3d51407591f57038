// Package apiserver assembles nativevirt-apiserver: the kubevirt.io API group (v1 and v1alpha3)
// on k8s.io/apiserver, backed by the registries in pkg/registry, plus the discovery of the
// subresources.kubevirt.io group that KubeVirt's virtctl talks to.
package apiserver

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/virtualmachine"
	"github.com/nativevirt/nativevirt/pkg/registry/virtualmachineinstance"
	"github.com/nativevirt/nativevirt/pkg/registry/virtualmachineinstancemigration"
	"github.com/nativevirt/nativevirt/pkg/registry/virtualmachineinstancereplicaset"
)

// ExtraConfig holds NativeVirt's own settings beyond the generic server's.
type ExtraConfig struct{}

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
	return CompletedConfig{&completedConfig{
		GenericConfig: cfg.GenericConfig.Complete(),
		ExtraConfig:   &cfg.ExtraConfig,
	}}
}

// New builds the server with the kubevirt.io group installed.
func (c completedConfig) New() (*Server, error) {
	generic, err := c.GenericConfig.New("nativevirt-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	s := &Server{GenericAPIServer: generic}

	storage, err := kubevirtStorage(c.GenericConfig.RESTOptionsGetter)
	if err != nil {
		return nil, err
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(kubevirtv1.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	group.NegotiatedSerializer = jsonAndYAMLOnly{Codecs}
	// v1alpha3 has the same schema as v1 (as in KubeVirt); both serve the same storage, which
	// stores v1.
	group.VersionedResourcesStorageMap[kubevirtv1.SchemeGroupVersion.Version] = storage
	group.VersionedResourcesStorageMap[kubevirtv1.V1alpha3GroupVersion.Version] = storage
	if err := generic.InstallAPIGroup(&group); err != nil {
		return nil, fmt.Errorf("install %s: %w", kubevirtv1.GroupName, err)
	}
	if err := installSubresourcesGroup(generic); err != nil {
		return nil, err
	}
	return s, nil
}

// kubevirtStorage builds the REST storage of every kubevirt.io resource and subresource.
func kubevirtStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	vm, err := virtualmachine.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	vmi, err := virtualmachineinstance.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	rs, err := virtualmachineinstancereplicaset.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	mig, err := virtualmachineinstancemigration.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"virtualmachines":                          vm.VirtualMachine,
		"virtualmachines/status":                   vm.Status,
		"virtualmachineinstances":                  vmi.VirtualMachineInstance,
		"virtualmachineinstances/status":           vmi.Status,
		"virtualmachineinstancereplicasets":        rs.ReplicaSet,
		"virtualmachineinstancereplicasets/status": rs.Status,
		"virtualmachineinstancereplicasets/scale":  rs.Scale,
		"virtualmachineinstancemigrations":         mig.Migration,
		"virtualmachineinstancemigrations/status":  mig.Status,
	}, nil
}
