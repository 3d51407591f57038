package apiserver

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/instancetype/revision"
)

// installInstancetypeGroup serves instancetype.kubevirt.io/v1beta1: instance types and
// preferences, namespaced and cluster-wide. They are stored in the same etcd as kubevirt.io, in
// v1beta1 (StorageVersions).
func installInstancetypeGroup(s *genericapiserver.GenericAPIServer, storage map[string]rest.Storage) error {
	group := groupInfo(instancetypev1beta1.GroupName)
	group.VersionedResourcesStorageMap[instancetypev1beta1.SchemeGroupVersion.Version] = storage
	if err := s.InstallAPIGroup(&group); err != nil {
		return fmt.Errorf("install %s: %w", instancetypev1beta1.GroupName, err)
	}
	return nil
}

// instancetypeGetters read instance types and preferences from this server's own storage, for
// the admission of VirtualMachines that name them, and their revisions from the Kubernetes API
// (none without a client: standalone, VMs are then checked against the objects themselves).
func instancetypeGetters(storage map[string]rest.Storage, kube kubernetes.Interface) (*revision.Getters, error) {
	getter := func(resource string) (rest.Getter, error) {
		g, ok := storage[resource].(rest.Getter)
		if !ok {
			return nil, fmt.Errorf("no storage for %s", resource)
		}
		return g, nil
	}
	its, err := getter(instancetypev1beta1.PluralResourceName)
	if err != nil {
		return nil, err
	}
	clusterIts, err := getter(instancetypev1beta1.ClusterPluralResourceName)
	if err != nil {
		return nil, err
	}
	prefs, err := getter(instancetypev1beta1.PluralPreferenceResourceName)
	if err != nil {
		return nil, err
	}
	clusterPrefs, err := getter(instancetypev1beta1.ClusterPluralPreferenceResourceName)
	if err != nil {
		return nil, err
	}
	g := &revision.Getters{
		Instancetype: func(ctx context.Context, namespace, name string) (*instancetypev1beta1.VirtualMachineInstancetype, error) {
			return get[*instancetypev1beta1.VirtualMachineInstancetype](ctx, its, namespace, name)
		},
		ClusterInstancetype: func(ctx context.Context, name string) (*instancetypev1beta1.VirtualMachineClusterInstancetype, error) {
			return get[*instancetypev1beta1.VirtualMachineClusterInstancetype](ctx, clusterIts, "", name)
		},
		Preference: func(ctx context.Context, namespace, name string) (*instancetypev1beta1.VirtualMachinePreference, error) {
			return get[*instancetypev1beta1.VirtualMachinePreference](ctx, prefs, namespace, name)
		},
		ClusterPreference: func(ctx context.Context, name string) (*instancetypev1beta1.VirtualMachineClusterPreference, error) {
			return get[*instancetypev1beta1.VirtualMachineClusterPreference](ctx, clusterPrefs, "", name)
		},
	}
	if kube != nil {
		g.Revision = func(ctx context.Context, namespace, name string) (*appsv1.ControllerRevision, error) {
			return kube.AppsV1().ControllerRevisions(namespace).Get(ctx, name, metav1.GetOptions{})
		}
	}
	return g, nil
}

// get reads one object from a store as the request handler would, in namespace (empty for the
// cluster-scoped kinds).
func get[T runtime.Object](ctx context.Context, g rest.Getter, namespace, name string) (T, error) {
	var zero T
	obj, err := g.Get(genericapirequest.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
	if err != nil {
		return zero, err
	}
	out, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("store returned %T", obj)
	}
	return out, nil
}
