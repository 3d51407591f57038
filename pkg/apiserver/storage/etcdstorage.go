package storage

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"k8s.io/apimachinery/pkg/runtime"
	genericfeatures "k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/generic"
	apistorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	etcdfeature "k8s.io/apiserver/pkg/storage/feature"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/utils/clock"
)

// RawFunc builds the etcd storage of one resource, as generic.NewRawStorage does.
type RawFunc func(config *storagebackend.ConfigForResource, newFunc, newListFunc func() runtime.Object, resourcePrefix string) (apistorage.Interface, factory.DestroyFunc, error)

// Dialed is k8s.io/apiserver's own: each resource's storage dials the etcd servers of its
// configuration (--etcd-servers) with a gRPC client of its own.
var Dialed RawFunc = generic.NewRawStorage

// InProcessEtcd builds the storage of every resource on one client of an etcd member that runs in
// this process (embeddedetcd.Server.InProcessClient): a read, a write or a watch event is a
// function call into the member, not a gRPC message encoded, sent over loopback TCP, decoded and
// copied. Otherwise each storage is what k8s.io/apiserver's storage factory builds (the same
// store, decoder, transformer, latency metrics and compaction), with one compactor for all
// resources. The storage size metric (apiserver_storage_size_bytes) and the etcd health checks
// stay with the generic etcd options, which reach the member at its client URL.
type InProcessEtcd struct {
	client    *kubernetes.Client
	compactor compactor
}

// compactor is what etcd3.NewCompactor returns: the storage asks it for the last compacted
// revision, and it runs until stopped.
type compactor interface {
	etcd3.Compactor
	Stop()
}

// NewInProcessEtcd takes c, a client of the member whose clients otherwise dial endpoint, over
// (its KV is wrapped to record k8s.io/apiserver's etcd latency metrics). Every compactionInterval
// the history older than the previous interval's revision is compacted, as kube-apiserver does
// (0: never). Stop ends the compaction.
func NewInProcessEtcd(c *clientv3.Client, endpoint string, compactionInterval time.Duration) *InProcessEtcd {
	// The watch caches ask etcd for progress notifications (to serve a read or a watch at a
	// revision newer than their last event) only once k8s.io/apiserver has checked the version of
	// every endpoint of a client. An in-process client has no endpoints: without this check the
	// watch of a resource that has seen no write since the start waits for one, and times out.
	etcdfeature.DefaultFeatureSupportChecker.CheckClient(c.Ctx(), memberStatus{c, endpoint}, apistorage.RequestWatchProgress)
	c.KV = etcd3.NewETCDLatencyTracker(c.KV)
	kc := &kubernetes.Client{Client: c}
	kc.Kubernetes = kc
	e := &InProcessEtcd{client: kc}
	if compactionInterval > 0 {
		e.compactor = etcd3.NewCompactor(c, compactionInterval, clock.RealClock{}, nil)
	}
	return e
}

// memberStatus is the in-process client as k8s.io/apiserver's feature checker sees a client: the
// member named by its client URL, asked for its status (the in-process client answers for its
// member whatever the endpoint).
type memberStatus struct {
	c        *clientv3.Client
	endpoint string
}

func (m memberStatus) Endpoints() []string { return []string{m.endpoint} }

func (m memberStatus) Status(ctx context.Context, endpoint string) (*clientv3.StatusResponse, error) {
	return m.c.Status(ctx, endpoint)
}

// Storage is a RawFunc.
func (e *InProcessEtcd) Storage(config *storagebackend.ConfigForResource, newFunc, newListFunc func() runtime.Object, resourcePrefix string) (apistorage.Interface, factory.DestroyFunc, error) {
	transformer := config.Transformer
	if transformer == nil {
		transformer = identity.NewEncryptCheckTransformer()
	}
	versioner := apistorage.APIObjectVersioner{}
	decoder := etcd3.NewDefaultDecoder(config.Codec, versioner)
	unsafeDeletion := utilfeature.DefaultFeatureGate.Enabled(genericfeatures.AllowUnsafeMalformedObjectDeletion)
	if unsafeDeletion {
		transformer = etcd3.WithCorruptObjErrorHandlingTransformer(transformer)
		decoder = etcd3.WithCorruptObjErrorHandlingDecoder(decoder)
	}
	var c etcd3.Compactor
	if e.compactor != nil {
		c = e.compactor
	}
	store, err := etcd3.New(e.client, c, config.Codec, newFunc, newListFunc, config.Prefix, resourcePrefix,
		config.GroupResource, transformer, config.LeaseManagerConfig, decoder, versioner)
	if err != nil {
		return nil, nil, err
	}
	var once sync.Once
	destroy := func() { once.Do(store.Close) }
	var s apistorage.Interface = store
	if unsafeDeletion {
		s = etcd3.NewStoreWithUnsafeCorruptObjectDeletion(s, config.GroupResource)
	}
	return s, destroy, nil
}

// Stop ends the compaction (it may be called more than once); the client is its owner's to close.
func (e *InProcessEtcd) Stop() {
	if e.compactor != nil {
		e.compactor.Stop()
	}
}
