package storage

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	apistorage "k8s.io/apiserver/pkg/storage"
	cacherstorage "k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// SharingWatchCaches returns getter with every resource's storage built by raw, and the watch
// cache of every resource that has one built so that the objects entering the cache share their
// specs' repeated maps (sharedspecs.go). typer knows the kinds of the stored objects. cached says
// whether a resource has a watch cache (the --watch-cache and --watch-cache-sizes flags). With
// revisions (nil: none), consistent GETs of a cached resource are served from its cache when it
// holds the current version (cachedgets.go). Every resource's storage refuses watches and lists
// from a resourceVersion etcd has not reached (revisionguard.go).
func SharingWatchCaches(getter generic.RESTOptionsGetter, typer runtime.ObjectTyper, cached func(schema.GroupResource) (bool, error), raw RawFunc, revisions KeyRevisionFunc) generic.RESTOptionsGetter {
	return sharingOptions{getter, typer, cached, raw, revisions}
}

type sharingOptions struct {
	generic.RESTOptionsGetter
	typer     runtime.ObjectTyper
	cached    func(schema.GroupResource) (bool, error)
	raw       RawFunc
	revisions KeyRevisionFunc
}

func (o sharingOptions) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := o.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err != nil {
		return opts, err
	}
	cached, err := o.cached(resource)
	if err != nil {
		return opts, err
	}
	raw, revisions := o.raw, o.revisions
	if !cached {
		opts.Decorator = guardRevisions(func(config *storagebackend.ConfigForResource, resourcePrefix string, _ func(obj runtime.Object) (string, error),
			newFunc, newListFunc func() runtime.Object, _ apistorage.AttrFunc, _ apistorage.IndexerFuncs, _ *cache.Indexers,
		) (apistorage.Interface, factory.DestroyFunc, error) {
			return raw(config, newFunc, newListFunc, resourcePrefix)
		})
		return opts, nil
	}
	sharing := sharingCacher(raw)
	opts.Decorator = guardRevisions(func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(obj runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrsFunc apistorage.AttrFunc, triggerFuncs apistorage.IndexerFuncs, indexers *cache.Indexers,
	) (apistorage.Interface, factory.DestroyFunc, error) {
		s, destroy, err := sharing(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrsFunc, triggerFuncs, indexers)
		if err != nil || revisions == nil {
			return s, destroy, err
		}
		served, err := newCurrentFromCache(s, o.typer, config, newFunc, func(ctx context.Context, key string) (int64, error) {
			return revisions(ctx, config, resourcePrefix, key)
		})
		if err != nil {
			destroy()
			return nil, nil, err
		}
		return served, destroy, nil
	})
	return opts, nil
}

// sharingCacher is k8s.io/apiserver's registry.StorageWithCacher on raw with one difference: the
// cacher is fed through cacheFeed. Requests that bypass the cache (consistent GETs, updates,
// deletes) use the storage itself, and get objects of their own.
func sharingCacher(raw RawFunc) generic.StorageDecorator {
	return func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(obj runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrsFunc apistorage.AttrFunc, triggerFuncs apistorage.IndexerFuncs, indexers *cache.Indexers,
	) (apistorage.Interface, factory.DestroyFunc, error) {
		return storageWithSharingCacher(raw, config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrsFunc, triggerFuncs, indexers)
	}
}

func storageWithSharingCacher(
	raw RawFunc,
	config *storagebackend.ConfigForResource,
	resourcePrefix string,
	keyFunc func(obj runtime.Object) (string, error),
	newFunc func() runtime.Object,
	newListFunc func() runtime.Object,
	getAttrsFunc apistorage.AttrFunc,
	triggerFuncs apistorage.IndexerFuncs,
	indexers *cache.Indexers,
) (apistorage.Interface, factory.DestroyFunc, error) {
	s, destroyStorage, err := raw(config, newFunc, newListFunc, resourcePrefix)
	if err != nil {
		return s, destroyStorage, err
	}
	cacher, err := cacherstorage.NewCacherFromConfig(cacherstorage.Config{
		Storage:             cacheFeed{Interface: s, versions: newVersionTable()},
		Versioner:           apistorage.APIObjectVersioner{},
		GroupResource:       config.GroupResource,
		EventsHistoryWindow: config.EventsHistoryWindow,
		ResourcePrefix:      resourcePrefix,
		KeyFunc:             keyFunc,
		NewFunc:             newFunc,
		NewListFunc:         newListFunc,
		GetAttrsFunc:        getAttrsFunc,
		IndexerFuncs:        triggerFuncs,
		Indexers:            indexers,
		Codec:               config.Codec,
	})
	if err != nil {
		destroyStorage()
		return nil, func() {}, err
	}
	delegator := cacherstorage.NewCacheDelegator(cacher, s)
	var once sync.Once
	return delegator, func() {
		once.Do(func() {
			delegator.Stop()
			cacher.Stop()
			destroyStorage()
		})
	}, nil
}

// cacheFeed is the storage as the watch cache reads it: the objects of its list and of its watch
// share their specs' repeated maps (sharedspecs.go), and each version of an object shares what
// did not change since the one before it (sharedversions.go), before the cache keeps them.
type cacheFeed struct {
	apistorage.Interface
	versions *versionTable
}

func (f cacheFeed) GetList(ctx context.Context, key string, opts apistorage.ListOptions, listObj runtime.Object) error {
	if err := f.Interface.GetList(ctx, key, opts, listObj); err != nil {
		return err
	}
	var items []runtime.Object
	err := meta.EachListItem(listObj, func(o runtime.Object) error {
		shareSpecMaps(o)
		items = append(items, o)
		return nil
	})
	if err != nil {
		return err
	}
	f.versions.listed(items, opts.Predicate.Continue == "")
	return nil
}

func (f cacheFeed) Watch(ctx context.Context, key string, opts apistorage.ListOptions) (watch.Interface, error) {
	w, err := f.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	fw := &feedWatch{in: w, out: make(chan watch.Event), stop: make(chan struct{}), versions: f.versions}
	go fw.run()
	return fw, nil
}

// feedWatch passes a watch's events on, their objects sharing maps and unchanged parts. Unlike
// watch.Filter it ends when stopped even if nobody reads any more.
type feedWatch struct {
	in       watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
	versions *versionTable
}

func (w *feedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *feedWatch) Stop() {
	w.stopOnce.Do(func() {
		close(w.stop)
		w.in.Stop()
	})
}

func (w *feedWatch) run() {
	defer close(w.out)
	for {
		select {
		case <-w.stop:
			return
		case e, ok := <-w.in.ResultChan():
			if !ok {
				return
			}
			shareSpecMaps(e.Object)
			w.versions.observed(e)
			select {
			case w.out <- e:
			case <-w.stop:
				return
			}
		}
	}
}
