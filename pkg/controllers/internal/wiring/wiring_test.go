package wiring

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/nativevirt/nativevirt/pkg/controllers/internal/expectations"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
)

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// An add or update of the own resource queues it and notes its version; other types are ignored;
// a delete queues the object, its tombstone too.
func TestOwn(t *testing.T) {
	q := loop.New("test", func(context.Context, string) (loop.Result, error) { return loop.Result{}, nil })
	defer q.ShutDown()
	exp := expectations.New()
	h := Own(q, func(obj any) { Changed[*corev1.Pod](q, exp, obj) })

	exp.ExpectVersion("ns/a", "5")
	h.OnAdd(pod("a", "4"), false)
	if exp.VersionSatisfied("ns/a") {
		t.Error("version 4 satisfied an expected 5")
	}
	h.OnUpdate(pod("a", "4"), pod("a", "5"))
	if !exp.VersionSatisfied("ns/a") {
		t.Error("version 5 seen, still expected")
	}
	h.OnAdd(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, false)
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: pod("b", "1")})
	if got := q.Len(); got != 2 {
		t.Errorf("%d keys queued, want 2 (ns/a, ns/b)", got)
	}
}

func TestObject(t *testing.T) {
	if p, ok := Object[*corev1.Pod](pod("a", "1")); !ok || p.Name != "a" {
		t.Errorf("a pod: %v, %v", p, ok)
	}
	if p, ok := Object[*corev1.Pod](cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: pod("b", "1")}); !ok || p.Name != "b" {
		t.Errorf("a tombstone: %v, %v", p, ok)
	}
	if _, ok := Object[*corev1.Pod](&corev1.Node{}); ok {
		t.Error("a node read as a pod")
	}
}

func TestRegister(t *testing.T) {
	f := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	added := 0
	h := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { added++ }}
	if err := Register(Handler{f.Core().V1().Pods().Informer(), h}, Handler{f.Core().V1().Nodes().Informer(), h}); err != nil {
		t.Fatal(err)
	}
	// AddEventHandler fails once the informer has stopped.
	stopped := f.Core().V1().Services().Informer()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stopped.RunWithContext(ctx)
	if !stopped.IsStopped() {
		t.Fatal("the informer did not stop")
	}
	if err := Register(Handler{stopped, h}); err == nil {
		t.Error("a stopped informer took a handler")
	}
}

func TestResourceVersionOf(t *testing.T) {
	write := ResourceVersionOf(func(_ context.Context, p *corev1.Pod) (*corev1.Pod, error) {
		if p.Name == "fail" {
			return nil, errors.New("conflict")
		}
		out := p.DeepCopy()
		out.ResourceVersion = "7"
		return out, nil
	})
	if rv, err := write(context.Background(), pod("a", "6")); err != nil || rv != "7" {
		t.Errorf("write = %q, %v; want 7", rv, err)
	}
	if _, err := write(context.Background(), pod("fail", "6")); err == nil {
		t.Error("the error was lost")
	}
}

// A child's creation and deletion are observed for its owner, and the owner queued; a child
// without an owner goes to orphan; an owner that lost a child is queued too.
func TestChildren(t *testing.T) {
	q := loop.New("test", func(context.Context, string) (loop.Result, error) { return loop.Result{}, nil })
	defer q.ShutDown()
	exp := expectations.New()
	owner := func(p *corev1.Pod) string {
		if p.Labels["owner"] == "" {
			return ""
		}
		return "ns/" + p.Labels["owner"]
	}
	var orphans []string
	h := Children(q, exp, owner, func(p *corev1.Pod) { orphans = append(orphans, p.Name) })
	child := func(name, ownerName string) *corev1.Pod {
		p := pod(name, "1")
		p.UID = "uid-" + types.UID(name)
		p.Labels = map[string]string{"owner": ownerName}
		return p
	}

	exp.ExpectCreations("ns/o1", 1)
	h.OnAdd(child("a", "o1"), false)
	if !exp.Satisfied("ns/o1") {
		t.Error("the creation was not observed")
	}
	exp.ExpectDeletion("ns/o1", "uid-a")
	deleting := child("a", "o1")
	deleting.DeletionTimestamp = &metav1.Time{}
	h.OnUpdate(child("a", "o1"), deleting)
	if !exp.Satisfied("ns/o1") {
		t.Error("the start of the deletion was not observed")
	}
	exp.ExpectDeletion("ns/o1", "uid-b")
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: child("b", "o1")})
	if !exp.Satisfied("ns/o1") {
		t.Error("the removal was not observed")
	}
	h.OnUpdate(child("c", "o2"), child("c", "o3")) // o2 lost c to o3: both queued
	h.OnAdd(child("d", ""), false)
	h.OnUpdate(child("d", ""), child("d", ""))
	if want := []string{"d", "d"}; !slices.Equal(orphans, want) {
		t.Errorf("orphans %v, want %v", orphans, want)
	}
	if got := q.Len(); got != 3 {
		t.Errorf("%d keys queued, want 3 (ns/o1, ns/o2, ns/o3)", got)
	}
}
