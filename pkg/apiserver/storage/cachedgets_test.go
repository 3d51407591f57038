package storage

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	apistorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apiserver"
)

// cachedGetsFixture is the VMs' storage with the sharing watch cache on a fresh embedded etcd,
// and what the tests need to look behind it.
type cachedGetsFixture struct {
	cached  apistorage.Interface // the cache delegator
	backend *InProcessEtcd
	config  *storagebackend.ConfigForResource
	// etcdGets counts the consistent GETs that reached etcd's storage, storageGets every GET that
	// reached it (a cache that is not ready yet sends its GETs there too).
	etcdGets, storageGets *atomic.Int32
}

func newCachedGetsFixture(t *testing.T) cachedGetsFixture {
	t.Helper()
	f := cachedGetsFixture{backend: testEtcd(t, 0), etcdGets: &atomic.Int32{}, storageGets: &atomic.Int32{}}
	cfg := storagebackend.NewDefaultConfig("/registry", Codec(apiserver.Scheme, apiserver.StorageVersions))
	cfg.EncodeVersioner = apiserver.StorageVersions
	f.config = cfg.ForResource(kubevirtv1.Resource("virtualmachines"))
	counting := func(config *storagebackend.ConfigForResource, newFunc, newListFunc func() runtime.Object, resourcePrefix string) (apistorage.Interface, factory.DestroyFunc, error) {
		s, destroy, err := f.backend.Storage(config, newFunc, newListFunc, resourcePrefix)
		return countingGets{s, f.etcdGets, f.storageGets}, destroy, err
	}
	s := vmStorage(t, sharingCacher(counting), f.config, prefix)
	f.cached = s
	return f
}

// served is the storage as the registry sees it, with revision as the keys' revisions.
func (f cachedGetsFixture) served(t *testing.T, revision KeyRevisionFunc) apistorage.Interface {
	t.Helper()
	return f.servedFrom(t, f.cached, revision)
}

// servedFrom is served with cached in place of the fixture's cache delegator.
func (f cachedGetsFixture) servedFrom(t *testing.T, cached apistorage.Interface, revision KeyRevisionFunc) apistorage.Interface {
	t.Helper()
	s, err := newCurrentFromCache(cached, apiserver.Scheme, f.config, func() runtime.Object { return &kubevirtv1.VirtualMachine{} },
		func(ctx context.Context, key string) (int64, error) { return revision(ctx, f.config, prefix, key) })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// createCached creates a VM at key through s and waits until the watch cache holds it.
func (f cachedGetsFixture) createCached(ctx context.Context, t *testing.T, s apistorage.Interface, key string) kubevirtv1.VirtualMachine {
	t.Helper()
	var created kubevirtv1.VirtualMachine
	if err := s.Create(ctx, key, shapedVM("vm-a", "1Gi"), &created, 0); err != nil {
		t.Fatal(err)
	}
	f.waitCached(ctx, t, key, created.ResourceVersion)
	return created
}

// waitCached waits until the watch cache holds key at version rv: a GET at any version answers
// rv without reaching etcd (until the cache is ready, such GETs read etcd).
func (f cachedGetsFixture) waitCached(ctx context.Context, t *testing.T, key, rv string) {
	t.Helper()
	for {
		var vm kubevirtv1.VirtualMachine
		before := f.storageGets.Load()
		err := f.cached.Get(ctx, key, apistorage.GetOptions{ResourceVersion: "0", IgnoreNotFound: true}, &vm)
		if err == nil && vm.ResourceVersion == rv && f.storageGets.Load() == before {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the watch cache never held %s at %s", key, rv)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// consistentGet GETs key through s without a resourceVersion; it returns the VM and how many
// consistent GETs, and GETs of any kind, reached etcd's storage meanwhile.
func (f cachedGetsFixture) consistentGet(ctx context.Context, t *testing.T, s apistorage.Interface, key string) (got kubevirtv1.VirtualMachine, consistent, all int32) {
	t.Helper()
	consistent, all = f.etcdGets.Load(), f.storageGets.Load()
	if err := s.Get(ctx, key, apistorage.GetOptions{}, &got); err != nil {
		t.Fatal(err)
	}
	return got, f.etcdGets.Load() - consistent, f.storageGets.Load() - all
}

// countingGets counts the GETs it serves: consistent ones in consistent, all in all.
type countingGets struct {
	apistorage.Interface
	consistent, all *atomic.Int32
}

func (c countingGets) Get(ctx context.Context, key string, opts apistorage.GetOptions, out runtime.Object) error {
	c.all.Add(1)
	if opts.ResourceVersion == "" {
		c.consistent.Add(1)
	}
	return c.Interface.Get(ctx, key, opts, out)
}

// The revision of a key is the version the storage gave its last write; a missing key has none,
// a key outside the resource is refused.
func TestKeyRevisionIsTheStoredVersion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := newCachedGetsFixture(t)
	key := prefix + "ns/vm-a"
	var created kubevirtv1.VirtualMachine
	if err := f.cached.Create(ctx, key, shapedVM("vm-a", "1Gi"), &created, 0); err != nil {
		t.Fatal(err)
	}
	rev, err := f.backend.KeyRevision(ctx, f.config, prefix, key)
	if err != nil || rev == 0 || created.ResourceVersion != strconv.FormatInt(rev, 10) {
		t.Errorf("revision of the created VM: %d (err %v), want its resourceVersion %s", rev, err, created.ResourceVersion)
	}
	if rev, err := f.backend.KeyRevision(ctx, f.config, prefix, prefix+"ns/vm-b"); err != nil || rev != 0 {
		t.Errorf("revision of a missing VM: %d (err %v), want 0", rev, err)
	}
	if _, err := f.backend.KeyRevision(ctx, f.config, prefix, "/kubevirt.io/virtualmachineinstances/ns/vm-a"); err == nil {
		t.Error("a key outside the resource's prefix was read")
	}
}

// A consistent GET of a VM the cache holds at its current version does not read etcd's value,
// answers what etcd holds, and gives the caller an object of its own.
func TestConsistentGetServedFromCurrentCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := newCachedGetsFixture(t)
	s := f.served(t, f.backend.KeyRevision)
	key := prefix + "ns/vm-a"
	created := f.createCached(ctx, t, s, key)

	got, n, _ := f.consistentGet(ctx, t, s, key)
	if n != 0 {
		t.Errorf("the GET read etcd's value %d times, want 0 (the cache holds the current version)", n)
	}
	if diff := cmp.Diff(created, got); diff != "" {
		t.Errorf("GET from the cache differs from the stored VM (-stored +got):\n%s", diff)
	}
	got.Labels = map[string]string{"changed": "by the caller"}
	got.Spec.Template.Spec.NodeSelector["kubernetes.io/os"] = "changed"
	var again kubevirtv1.VirtualMachine
	if err := s.Get(ctx, key, apistorage.GetOptions{}, &again); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(created, again); diff != "" {
		t.Errorf("a caller's change reached the cache (-stored +got):\n%s", diff)
	}
}

// When etcd holds a newer version than the cache (or the cache lacks the key), the GET reads etcd.
func TestConsistentGetReadsEtcdWhenCacheIsBehind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := newCachedGetsFixture(t)
	key := prefix + "ns/vm-a"
	created := f.createCached(ctx, t, f.cached, key)
	// etcd says a later write exists that the cache has not seen.
	ahead := f.served(t, func(ctx context.Context, c *storagebackend.ConfigForResource, p, k string) (int64, error) {
		rev, err := f.backend.KeyRevision(ctx, c, p, k)
		return rev + 1, err
	})
	before := f.etcdGets.Load()
	got, n, _ := f.consistentGet(ctx, t, ahead, key)
	if n != 1 {
		t.Errorf("the GET read etcd %d times, want 1", n)
	}
	if diff := cmp.Diff(created, got); diff != "" {
		t.Errorf("GET from etcd differs from the stored VM (-stored +got):\n%s", diff)
	}
	// A VM the cache does not hold yet: etcd answers, also "not found".
	s := f.served(t, f.backend.KeyRevision)
	if err := s.Get(ctx, prefix+"ns/vm-b", apistorage.GetOptions{}, &got); !apistorage.IsNotFound(err) {
		t.Errorf("GET of a missing VM: %v, want not found", err)
	}
	if n := f.etcdGets.Load() - before; n != 2 {
		t.Errorf("the GETs read etcd %d times, want 2", n)
	}
}

// notReady is a cache delegator that reports its cache as not ready.
type notReady struct{ apistorage.Interface }

func (notReady) ReadinessCheck() error { return apistorage.ErrStorageNotReady }

// While the cache is not ready, a consistent GET reads etcd once, as k8s.io/apiserver does,
// rather than asking the cache (which would read etcd too) and then the key's revision.
func TestConsistentGetReadsEtcdOnceWhileCacheIsNotReady(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := newCachedGetsFixture(t)
	key := prefix + "ns/vm-a"
	created := f.createCached(ctx, t, f.cached, key)
	s := f.servedFrom(t, notReady{f.cached}, f.backend.KeyRevision)
	got, n, m := f.consistentGet(ctx, t, s, key)
	if n != 1 || m != 1 {
		t.Errorf("the GET read etcd %d times, %d of them consistently; want 1, consistent", m, n)
	}
	if diff := cmp.Diff(created, got); diff != "" {
		t.Errorf("GET from etcd differs from the stored VM (-stored +got):\n%s", diff)
	}
}
