package storage

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	apistorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apiserver"
)

// inProcessVMStorage is the VMs' storage (no watch cache) on a fresh embedded etcd reached
// in-process, compacted every compaction (0: never); everything ends with the test.
func inProcessVMStorage(t *testing.T, compaction time.Duration) apistorage.Interface {
	t.Helper()
	backend := testEtcd(t, compaction)
	cfg := storagebackend.NewDefaultConfig("/registry", Codec(apiserver.Scheme, kubevirtv1.SchemeGroupVersion))
	s, destroy, err := backend.Storage(cfg.ForResource(kubevirtv1.Resource("virtualmachines")),
		func() runtime.Object { return &kubevirtv1.VirtualMachine{} },
		func() runtime.Object { return &kubevirtv1.VirtualMachineList{} }, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(destroy)
	return s
}

// The in-process storage is a whole etcd storage: create, get, conditional update, list, delete,
// and a watch that sees each of them in order.
func TestInProcessStorageReadsWritesAndWatches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := inProcessVMStorage(t, 0)
	key := prefix + "ns/vm-a"
	var created kubevirtv1.VirtualMachine
	if err := s.Create(ctx, key, shapedVM("vm-a", "1Gi"), &created, 0); err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, prefix, apistorage.ListOptions{ResourceVersion: created.ResourceVersion, Recursive: true, Predicate: apistorage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	var updated kubevirtv1.VirtualMachine
	err = s.GuaranteedUpdate(ctx, key, &updated, false, nil, func(in runtime.Object, _ apistorage.ResponseMeta) (runtime.Object, *uint64, error) {
		vm := in.(*kubevirtv1.VirtualMachine).DeepCopy()
		vm.Labels = map[string]string{"app": "demo"}
		return vm, nil, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got kubevirtv1.VirtualMachine
	if err := s.Get(ctx, key, apistorage.GetOptions{}, &got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != updated.ResourceVersion || got.Labels["app"] != "demo" {
		t.Errorf("got version %s labels %v, want version %s with the update's label", got.ResourceVersion, got.Labels, updated.ResourceVersion)
	}
	var list kubevirtv1.VirtualMachineList
	if err := s.GetList(ctx, prefix, apistorage.ListOptions{Recursive: true, Predicate: apistorage.Everything}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "vm-a" {
		t.Errorf("list holds %d VMs, want vm-a alone", len(list.Items))
	}
	if err := s.Delete(ctx, key, &kubevirtv1.VirtualMachine{}, nil, apistorage.ValidateAllObjectFunc, nil, apistorage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Get(ctx, key, apistorage.GetOptions{}, &got); !apistorage.IsNotFound(err) {
		t.Errorf("get after delete: %v, want not found", err)
	}

	for _, want := range []watch.EventType{watch.Modified, watch.Deleted} {
		select {
		case ev := <-w.ResultChan():
			vm, ok := ev.Object.(*kubevirtv1.VirtualMachine)
			if ev.Type != want || !ok || vm.Name != "vm-a" {
				t.Fatalf("watch event %s %T, want %s of vm-a", ev.Type, ev.Object, want)
			}
		case <-ctx.Done():
			t.Fatalf("no %s event", want)
		}
	}
}

// The compactor runs on the in-process client: the history before its compaction is gone, as
// with kube-apiserver's compactor on a dialled etcd.
func TestInProcessStorageCompacts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := inProcessVMStorage(t, 200*time.Millisecond)
	var first kubevirtv1.VirtualMachine
	if err := s.Create(ctx, prefix+"ns/vm-a", shapedVM("vm-a", "1Gi"), &first, 0); err != nil {
		t.Fatal(err)
	}
	// The compactor compacts to the revision it saw one interval earlier: keep writing until
	// the first object's revision is history.
	for i := 0; ; i++ {
		if i > 0 {
			if err := s.Delete(ctx, prefix+"ns/vm-b", &kubevirtv1.VirtualMachine{}, nil, apistorage.ValidateAllObjectFunc, nil, apistorage.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Create(ctx, prefix+"ns/vm-b", shapedVM("vm-b", "1Gi"), nil, 0); err != nil {
			t.Fatal(err)
		}
		var list kubevirtv1.VirtualMachineList
		err := s.GetList(ctx, prefix, apistorage.ListOptions{
			ResourceVersion: first.ResourceVersion, ResourceVersionMatch: "Exact", Recursive: true, Predicate: apistorage.Everything,
		}, &list)
		if apierrors.IsResourceExpired(err) {
			return // compacted
		}
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("the first revision was never compacted")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
