package storage

import (
	"context"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	apistorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apiserver"
)

// A watch or list from a resourceVersion beyond etcd's revision (a client of an etcd that was
// replaced) is refused as too large, with and without the watch cache; from a version etcd
// handed out, both serve as before, and the watch delivers the next write.
func TestRevisionGuardRefusesVersionsEtcdHasNotReached(t *testing.T) {
	for _, tt := range []struct {
		name   string
		cached bool
	}{{"watch cache", true}, {"etcd", false}} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s := guardedVMStorage(t, tt.cached)
			// A watch cache that is not ready yet refuses watches (429) whatever their version.
			for s.ReadinessCheck() != nil {
				if ctx.Err() != nil {
					t.Fatalf("the storage did not get ready: %v", s.ReadinessCheck())
				}
				time.Sleep(20 * time.Millisecond)
			}
			created := &kubevirtv1.VirtualMachine{}
			if err := s.Create(ctx, prefix+"ns/vm-a", shapedVM("vm-a", "1Gi"), created, 0); err != nil {
				t.Fatal(err)
			}
			rv, err := strconv.ParseUint(created.ResourceVersion, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			beyond := strconv.FormatUint(rv+1000, 10)

			w, err := s.Watch(ctx, prefix+"ns", apistorage.ListOptions{ResourceVersion: beyond, Predicate: apistorage.Everything, Recursive: true})
			if !apistorage.IsTooLargeResourceVersion(err) {
				if w != nil {
					w.Stop()
				}
				t.Fatalf("watch from %s (etcd at %d): %v, want a too large resource version error", beyond, rv, err)
			}
			var list kubevirtv1.VirtualMachineList
			err = s.GetList(ctx, prefix+"ns", apistorage.ListOptions{ResourceVersion: beyond, Predicate: apistorage.Everything, Recursive: true}, &list)
			if !apistorage.IsTooLargeResourceVersion(err) {
				t.Fatalf("list from %s (etcd at %d): %v, want a too large resource version error", beyond, rv, err)
			}

			if err := s.GetList(ctx, prefix+"ns", apistorage.ListOptions{ResourceVersion: created.ResourceVersion, Predicate: apistorage.Everything, Recursive: true}, &list); err != nil {
				t.Fatalf("list from the created VM's version %s: %v", created.ResourceVersion, err)
			}
			if len(list.Items) != 1 {
				t.Fatalf("list from %s: %d VMs, want 1", created.ResourceVersion, len(list.Items))
			}
			w, err = s.Watch(ctx, prefix+"ns", apistorage.ListOptions{ResourceVersion: created.ResourceVersion, Predicate: apistorage.Everything, Recursive: true})
			if err != nil {
				t.Fatalf("watch from the created VM's version %s: %v", created.ResourceVersion, err)
			}
			defer w.Stop()
			if err := s.Create(ctx, prefix+"ns/vm-b", shapedVM("vm-b", "1Gi"), &kubevirtv1.VirtualMachine{}, 0); err != nil {
				t.Fatal(err)
			}
			select {
			case e := <-w.ResultChan():
				// The watch cache's events carry its caching wrapper of the object.
				m, err := meta.Accessor(e.Object)
				if e.Type != watch.Added || err != nil || m.GetName() != "vm-b" {
					t.Fatalf("watch event %s %#v, want vm-b added", e.Type, e.Object)
				}
			case <-ctx.Done():
				t.Fatal("the watch from a version etcd handed out delivered no event for the next write")
			}
		})
	}
}

// guardedVMStorage is the VMs' storage on a new embedded etcd behind the revision guard, with
// the sharing watch cache when cached.
func guardedVMStorage(t *testing.T, cached bool) apistorage.Interface {
	t.Helper()
	backend := testEtcd(t, 0)
	cfg := storagebackend.NewDefaultConfig("/registry", Codec(apiserver.Scheme, kubevirtv1.SchemeGroupVersion))
	var decorate generic.StorageDecorator = func(config *storagebackend.ConfigForResource, resourcePrefix string, _ func(obj runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, _ apistorage.AttrFunc, _ apistorage.IndexerFuncs, _ *cache.Indexers,
	) (apistorage.Interface, factory.DestroyFunc, error) {
		return backend.Storage(config, newFunc, newListFunc, resourcePrefix)
	}
	if cached {
		decorate = sharingCacher(backend.Storage)
	}
	return vmStorage(t, guardRevisions(decorate), cfg.ForResource(kubevirtv1.Resource("virtualmachines")), prefix)
}
