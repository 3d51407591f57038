package storage

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	apistorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// revisionGuard refuses watches and lists that start from a resourceVersion beyond etcd's
// current revision, with "Too large resource version" (504, cause ResourceVersionTooLarge, no
// Retry-After): the answer on which client-go's reflector drops the version it holds and lists
// afresh.
//
// A client holds such a version when the etcd behind the server was replaced while the client
// ran: the default installation's embedded etcd swapped for the HA installation's three members
// (each installation keeps its objects in its own etcd), or an etcd restored from a backup. Its
// informers resume their watches from the old etcd's revision, which the new etcd has not
// reached. k8s.io/apiserver's watch cache and etcd itself accept such a watch and deliver no event
// until the new etcd's revision passes the old one: the client stays blind to every object
// written meanwhile — a node agent never sees the instances scheduled to its node. No version
// this etcd handed out can exceed its current revision (read linearizably), so the guard refuses
// nothing a client got from this etcd, even through another API server on it.
type revisionGuard struct {
	apistorage.Interface
}

// guardRevisions puts a revisionGuard in front of the storage decorate builds.
func guardRevisions(decorate generic.StorageDecorator) generic.StorageDecorator {
	return func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(obj runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrsFunc apistorage.AttrFunc, triggerFuncs apistorage.IndexerFuncs, indexers *cache.Indexers,
	) (apistorage.Interface, factory.DestroyFunc, error) {
		s, destroy, err := decorate(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrsFunc, triggerFuncs, indexers)
		if err != nil {
			return s, destroy, err
		}
		return revisionGuard{Interface: s}, destroy, nil
	}
}

func (g revisionGuard) Watch(ctx context.Context, key string, opts apistorage.ListOptions) (watch.Interface, error) {
	if err := g.reachable(ctx, opts.ResourceVersion); err != nil {
		return nil, err
	}
	return g.Interface.Watch(ctx, key, opts)
}

func (g revisionGuard) GetList(ctx context.Context, key string, opts apistorage.ListOptions, listObj runtime.Object) error {
	if err := g.reachable(ctx, opts.ResourceVersion); err != nil {
		return err
	}
	return g.Interface.GetList(ctx, key, opts, listObj)
}

// reachable fails when resourceVersion is beyond etcd's current revision. "" and "0" (no
// particular version) pass; so does a malformed version, which the storage refuses itself; so
// does any version when etcd's revision cannot be read (the request meets the same etcd next).
func (g revisionGuard) reachable(ctx context.Context, resourceVersion string) error {
	if resourceVersion == "" || resourceVersion == "0" {
		return nil
	}
	want, err := apistorage.APIObjectVersioner{}.ParseResourceVersion(resourceVersion)
	if err != nil {
		return nil
	}
	current, err := g.Interface.GetCurrentResourceVersion(ctx)
	if err != nil || want <= current {
		return nil
	}
	return apistorage.NewTooLargeResourceVersionError(want, current, 0)
}
