package storage

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	apistorage "k8s.io/apiserver/pkg/storage"
	cacherstorage "k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apiserver"
)

// The watch cache's VMs share the maps their specs repeat, while a VM read from etcd for one
// request (a consistent GET, what an update starts from) has maps of its own.
func TestWatchCacheObjectsShareSpecMaps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := sharingVMStorage(ctx, t)

	for _, name := range []string{"vm-a", "vm-b"} {
		vm := shapedVM(name, "1Gi")
		if err := s.Create(ctx, prefix+"ns/"+name, vm, &kubevirtv1.VirtualMachine{}, 0); err != nil {
			t.Fatal(err)
		}
	}

	// A list at resourceVersion 0 is served by the cache once it is ready (before the list: a
	// cache that is not ready sends the list to etcd) and has both.
	var cached kubevirtv1.VirtualMachineList
	for {
		cached = kubevirtv1.VirtualMachineList{}
		ready := s.ReadinessCheck() == nil
		err := s.GetList(ctx, prefix+"ns", apistorage.ListOptions{ResourceVersion: "0", Predicate: apistorage.Everything, Recursive: true}, &cached)
		if err == nil && ready && len(cached.Items) == 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the cache did not list the two VMs: %v (%d items)", err, len(cached.Items))
		}
		time.Sleep(20 * time.Millisecond)
	}
	a, b := cached.Items[0].Spec.Template.Spec, cached.Items[1].Spec.Template.Spec
	for _, m := range []struct {
		what string
		a, b any
	}{
		{"requests", a.Domain.Resources.Requests, b.Domain.Resources.Requests},
		{"limits", a.Domain.Resources.Limits, b.Domain.Resources.Limits},
		{"nodeSelector", a.NodeSelector, b.NodeSelector},
	} {
		if !sameMap(m.a, m.b) {
			t.Errorf("the cached VMs' %s are separate maps", m.what)
		}
	}

	var got kubevirtv1.VirtualMachine
	if err := s.Get(ctx, prefix+"ns/vm-a", apistorage.GetOptions{}, &got); err != nil {
		t.Fatal(err)
	}
	if sameMap(got.Spec.Template.Spec.Domain.Resources.Requests, a.Domain.Resources.Requests) {
		t.Error("a VM read from etcd shares its requests with the cache's VMs")
	}
}

// A status write's version in the watch cache shares the spec of the version before it; a VM
// read from etcd does not.
func TestWatchCacheVersionsShareTheirSpec(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := sharingVMStorage(ctx, t)

	const key = prefix + "ns/vm-a"
	created := &kubevirtv1.VirtualMachine{}
	if err := s.Create(ctx, key, shapedVM("vm-a", "1Gi"), created, 0); err != nil {
		t.Fatal(err)
	}
	// cachedAt lists the cache once it holds vm-a at resourceVersion rv or later.
	cachedAt := func(rv string) *kubevirtv1.VirtualMachine {
		t.Helper()
		for {
			var list kubevirtv1.VirtualMachineList
			err := s.GetList(ctx, prefix+"ns", apistorage.ListOptions{ResourceVersion: rv, Predicate: apistorage.Everything, Recursive: true}, &list)
			if err == nil && len(list.Items) == 1 && list.Items[0].ResourceVersion == rv {
				return &list.Items[0]
			}
			if ctx.Err() != nil {
				t.Fatalf("the cache did not hold vm-a at %s: %v", rv, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	before := cachedAt(created.ResourceVersion)

	updated := &kubevirtv1.VirtualMachine{}
	err := s.GuaranteedUpdate(ctx, key, updated, false, nil, func(in runtime.Object, _ apistorage.ResponseMeta) (runtime.Object, *uint64, error) {
		vm := in.(*kubevirtv1.VirtualMachine).DeepCopy()
		vm.Status.PrintableStatus = kubevirtv1.VirtualMachineStatusStopped
		return vm, nil, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	after := cachedAt(updated.ResourceVersion)
	if after.Status.PrintableStatus != kubevirtv1.VirtualMachineStatusStopped {
		t.Fatalf("the cached VM's status is %q", after.Status.PrintableStatus)
	}
	if after.Spec.Template != before.Spec.Template {
		t.Error("the status write's version in the cache has a spec of its own")
	}
	var got kubevirtv1.VirtualMachine
	if err := s.Get(ctx, key, apistorage.GetOptions{}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Template == after.Spec.Template {
		t.Error("a VM read from etcd shares its spec with the cache's VM")
	}
}

// prefix is where sharingVMStorage keeps VMs.
const prefix = "/kubevirt.io/virtualmachines/"

// sharingVMStorage is the VMs' storage with the sharing watch cache, on a fresh embedded etcd;
// both end with the test.
func sharingVMStorage(ctx context.Context, t *testing.T) apistorage.Interface {
	t.Helper()
	return sharingVMStorageWith(ctx, t, Codec(apiserver.Scheme, kubevirtv1.SchemeGroupVersion))
}

// sharingVMStorageWith is sharingVMStorage storing with codec.
func sharingVMStorageWith(ctx context.Context, t *testing.T, codec runtime.Codec) apistorage.Interface {
	t.Helper()
	backend := testEtcd(t, 0)
	cfg := storagebackend.NewDefaultConfig("/registry", codec)
	return vmStorage(t, sharingCacher(backend.Storage), cfg.ForResource(kubevirtv1.Resource("virtualmachines")), prefix)
}

// vmStorage is the VMs' storage under prefix as decorate builds it; it ends with the test.
func vmStorage(t *testing.T, decorate generic.StorageDecorator, config *storagebackend.ConfigForResource, prefix string) apistorage.Interface {
	t.Helper()
	s, destroy, err := decorate(config, prefix,
		func(obj runtime.Object) (string, error) { return apistorage.NamespaceKeyFunc(prefix, obj) },
		func() runtime.Object { return &kubevirtv1.VirtualMachine{} },
		func() runtime.Object { return &kubevirtv1.VirtualMachineList{} },
		apistorage.DefaultNamespaceScopedAttr, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(destroy)
	return s
}

func sameMap(a, b any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// shapedVM is a VM of the shape many VMs share: resources and node selector, and memory.
func shapedVM(name, memory string) *kubevirtv1.VirtualMachine {
	return &kubevirtv1.VirtualMachine{
		TypeMeta:   metav1.TypeMeta{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: kubevirtv1.VirtualMachineSpec{
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{Spec: kubevirtv1.VirtualMachineInstanceSpec{
				Domain: kubevirtv1.DomainSpec{Resources: kubevirtv1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourceCPU: resource.MustParse("500m")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
				}},
				NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			}},
		},
	}
}

// Every resource's storage is built by the given function; the watch cache's resources get the
// sharing cacher in front of it, resources without a cache the storage alone; both behind the
// revision guard.
func TestSharingWatchCachesDecoratesCachedResourcesOnly(t *testing.T) {
	backend := testEtcd(t, 0)
	built := map[string]int{}
	raw := func(config *storagebackend.ConfigForResource, newFunc, newListFunc func() runtime.Object, resourcePrefix string) (apistorage.Interface, factory.DestroyFunc, error) {
		built[config.GroupResource.Resource]++
		return backend.Storage(config, newFunc, newListFunc, resourcePrefix)
	}
	getter := SharingWatchCaches(fixedOptions{}, apiserver.Scheme, func(r schema.GroupResource) (bool, error) {
		if r.Resource == "broken" {
			return false, fmt.Errorf("bad sizes")
		}
		return r.Resource == "virtualmachines", nil
	}, raw, nil)
	for resource, wantCacher := range map[string]bool{"virtualmachines": true, "virtualmachineinstancemigrations": false} {
		opts, err := getter.GetRESTOptions(kubevirtv1.Resource(resource), nil)
		if err != nil {
			t.Fatal(err)
		}
		guarded := vmStorage(t, opts.Decorator, opts.StorageConfig, "/kubevirt.io/"+resource+"/")
		g, ok := guarded.(revisionGuard)
		if !ok {
			t.Fatalf("%s: storage %T, want the revision guard in front", resource, guarded)
		}
		s := g.Interface
		if _, isCacher := s.(*cacherstorage.CacheDelegator); isCacher != wantCacher {
			t.Errorf("%s: storage %T, want a watch cache: %v", resource, s, wantCacher)
		}
		if built[resource] != 1 {
			t.Errorf("%s: the given storage function built %d storages, want 1", resource, built[resource])
		}
	}
	if _, err := getter.GetRESTOptions(kubevirtv1.Resource("broken"), nil); err == nil {
		t.Error("an error deciding about the cache was dropped")
	}
}

type fixedOptions struct{}

func (fixedOptions) GetRESTOptions(r schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	cfg := storagebackend.NewDefaultConfig("/registry", Codec(apiserver.Scheme, kubevirtv1.SchemeGroupVersion))
	return generic.RESTOptions{StorageConfig: cfg.ForResource(r), Decorator: generic.UndecoratedStorage}, nil
}

// A stopped feed ends even when nobody reads its events any more, and stops the watch it reads.
func TestFeedWatchEndsWhenStopped(t *testing.T) {
	in := watch.NewFakeWithChanSize(1, false)
	w, err := cacheFeed{fakeWatchStorage{w: in}, newVersionTable()}.Watch(context.Background(), "/", apistorage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in.Add(shapedVM("vm-a", "1Gi")) // the feed takes it and nobody reads it
	time.Sleep(50 * time.Millisecond)
	w.Stop()
	select {
	case _, open := <-w.ResultChan():
		for open {
			_, open = <-w.ResultChan()
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the feed's channel stayed open after Stop")
	}
	if !in.IsStopped() {
		t.Error("the feed did not stop the watch it reads")
	}
}

type fakeWatchStorage struct {
	apistorage.Interface
	w watch.Interface
}

func (f fakeWatchStorage) Watch(context.Context, string, apistorage.ListOptions) (watch.Interface, error) {
	return f.w, nil
}
