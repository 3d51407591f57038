package storage

import (
	"context"
	"fmt"
	"path"
	"reflect"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apistorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
)

// KeyRevisionFunc returns the revision of the last write of key (a key of the storage of config's
// resource, as apistorage.Interface takes it), read from etcd linearizably but without the value;
// 0 when there is no such key.
type KeyRevisionFunc func(ctx context.Context, config *storagebackend.ConfigForResource, resourcePrefix, key string) (int64, error)

// currentFromCache serves a consistent GET (one without a resourceVersion, which
// k8s.io/apiserver always reads from etcd) from the watch cache when etcd confirms that the cache
// holds the key's current version: a keys-only read of the key instead of reading its value,
// decoding it and allocating a new object for it. A key's value at one revision is one value, so
// the answer is the same object, as fresh as the read from etcd would have been. When the cache
// is behind (it has not yet seen the last write), does not hold the key or is not ready, the GET
// reads etcd as before. Everything else goes to the cache delegator unchanged.
type currentFromCache struct {
	apistorage.Interface
	newFunc func() runtime.Object
	// kind is the kind and storage version that objects read from etcd carry (objects of the
	// watch cache carry none).
	kind schema.GroupVersionKind
	// revision is the KeyRevisionFunc of this storage's resource.
	revision func(ctx context.Context, key string) (int64, error)
}

func (s currentFromCache) Get(ctx context.Context, key string, opts apistorage.GetOptions, out runtime.Object) error {
	if opts.ResourceVersion == "" {
		if cached, ok := s.current(ctx, key); ok {
			// The cache's objects are shared by every reader; the caller may modify its own.
			own := cached.DeepCopyObject()
			own.GetObjectKind().SetGroupVersionKind(s.kind)
			reflect.ValueOf(out).Elem().Set(reflect.ValueOf(own).Elem())
			return nil
		}
	}
	return s.Interface.Get(ctx, key, opts, out)
}

// newCurrentFromCache serves consistent GETs of the cache delegator s from its cache where it can,
// the keys' revisions read by revision; typer tells the kinds of the resource's objects.
func newCurrentFromCache(s apistorage.Interface, typer runtime.ObjectTyper, config *storagebackend.ConfigForResource, newFunc func() runtime.Object,
	revision func(ctx context.Context, key string) (int64, error)) (currentFromCache, error) {
	kinds, _, err := typer.ObjectKinds(newFunc())
	if err != nil {
		return currentFromCache{}, err
	}
	kind, ok := config.EncodeVersioner.KindForGroupVersionKinds(kinds)
	if !ok {
		return currentFromCache{}, fmt.Errorf("%s: no storage version among %v", config.GroupResource, kinds)
	}
	return currentFromCache{Interface: s, newFunc: newFunc, kind: kind, revision: revision}, nil
}

// current is the watch cache's object of key if it is the key's current version in etcd.
func (s currentFromCache) current(ctx context.Context, key string) (runtime.Object, bool) {
	// A cache that is not ready (still listing at start, or listing again after its watch
	// failed) sends the read below to etcd, the object's value and all: read etcd once instead.
	if s.Interface.ReadinessCheck() != nil {
		return nil, false
	}
	cached := s.newFunc()
	// Resource version "0": whatever the cache holds, without waiting for it to catch up.
	if err := s.Interface.Get(ctx, key, apistorage.GetOptions{ResourceVersion: "0", IgnoreNotFound: true}, cached); err != nil {
		return nil, false
	}
	version, err := apistorage.APIObjectVersioner{}.ObjectResourceVersion(cached)
	if err != nil || version == 0 {
		return nil, false // not in the cache
	}
	current, err := s.revision(ctx, key)
	if err != nil || current != int64(version) {
		return nil, false
	}
	return cached, true
}

// KeyRevision is a KeyRevisionFunc: the key as k8s.io/apiserver's etcd storage writes it (the
// storage prefix, then the key), read without its value.
func (e *InProcessEtcd) KeyRevision(ctx context.Context, config *storagebackend.ConfigForResource, resourcePrefix, key string) (int64, error) {
	prepared, err := apistorage.PrepareKey(resourcePrefix, key, false)
	if err != nil {
		return 0, err
	}
	resp, err := e.client.KV.Get(ctx, etcdKey(config.Prefix, prepared), clientv3.WithKeysOnly())
	if err != nil {
		return 0, err
	}
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	return resp.Kvs[0].ModRevision, nil
}

// etcdKey is where k8s.io/apiserver's etcd storage with the storage prefix keeps key.
func etcdKey(prefix, key string) string {
	p := path.Join("/", prefix)
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p + strings.TrimPrefix(key, "/")
}
