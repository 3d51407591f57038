package integration

import (
	"context"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// A client that ran against another etcd (an installation switched between the default and the
// HA one, an etcd restored from a backup) resumes from that etcd's resourceVersion, beyond this
// etcd's revision. A watch or a list from it is refused as too large (cause
// ResourceVersionTooLarge), and an informer holding such a version lists afresh and sees what
// was written since, where the watch cache would have delivered nothing.
func TestVersionBeyondEtcdIsRefusedAndInformersRelist(t *testing.T) {
	srv := framework.Start(t, "")
	dyn := srv.Dynamic(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	vms := dyn.Resource(framework.VMs).Namespace(ns)
	first := createFromYAML(t, dyn, framework.VMs, framework.VMYAML("before-switch"))
	rv, err := strconv.ParseUint(first.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	beyond := strconv.FormatUint(rv+100000, 10)

	if w, err := vms.Watch(ctx, metav1.ListOptions{ResourceVersion: beyond}); !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		if w != nil {
			w.Stop()
		}
		t.Fatalf("watch from %s (etcd at %d): %v, want a too large resource version", beyond, rv, err)
	}
	if _, err := vms.List(ctx, metav1.ListOptions{ResourceVersion: beyond}); !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		t.Fatalf("list from %s (etcd at %d): %v, want a too large resource version", beyond, rv, err)
	}

	// An informer whose first list came from the other etcd: it holds that etcd's version.
	lists := 0
	lw := listsOnly{&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l, err := vms.List(ctx, o)
			if err == nil && lists == 0 {
				l.SetResourceVersion(beyond)
			}
			lists++
			return l, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return vms.Watch(ctx, o)
		},
	}}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	r := cache.NewReflector(lw, &unstructured.Unstructured{}, store, 0)
	go r.RunWithContext(ctx)
	waitFor(ctx, t, "the informer's first list", func() bool { return len(store.ListKeys()) == 1 })
	createFromYAML(t, dyn, framework.VMs, framework.VMYAML("after-switch"))
	waitFor(ctx, t, "the informer to see the VM written after its list (it relists)", func() bool {
		_, exists, _ := store.GetByKey(ns + "/after-switch")
		return exists
	})
}

// listsOnly is a ListerWatcher that initial-syncs by a list (not a watch-list stream), so that
// the test can hand the reflector the other etcd's version.
type listsOnly struct{ *cache.ListWatch }

func (listsOnly) IsWatchListSemanticsUnSupported() bool { return true }

func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
