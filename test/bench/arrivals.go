package bench

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// arrivals times objects from their create (by the benchmark) until a watch sees their
// status.phase at Running (VMIs and pods alike), or Failed.
type arrivals struct {
	mu      sync.Mutex
	created map[string]time.Time
	running map[string]time.Duration
	failed  map[string]string
	want    int
	done    chan struct{}
	once    sync.Once
}

func newArrivals(want int) *arrivals {
	return &arrivals{created: map[string]time.Time{}, running: map[string]time.Duration{}, failed: map[string]string{},
		want: want, done: make(chan struct{})}
}

// create records name's create time and creates it.
func (a *arrivals) create(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) error {
	a.mu.Lock()
	a.created[obj.GetName()] = time.Now()
	a.mu.Unlock()
	if _, err := ri.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// follow watches ri (from now on) and records each created object's arrival at Running.
func (a *arrivals) follow(ctx context.Context, ri dynamic.ResourceInterface, opts metav1.ListOptions) (watch.Interface, error) {
	l, err := ri.List(ctx, metav1.ListOptions{LabelSelector: opts.LabelSelector, Limit: 1})
	if err != nil {
		return nil, err
	}
	opts.ResourceVersion = l.GetResourceVersion()
	w, err := ri.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	go func() {
		for ev := range w.ResultChan() {
			now := time.Now()
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
				continue
			}
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			a.observe(u.GetName(), phase, now)
		}
	}()
	return w, nil
}

func (a *arrivals) observe(name, phase string, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t0, ok := a.created[name]
	if _, seen := a.running[name]; !ok || seen || a.failed[name] != "" {
		return
	}
	switch phase {
	case "Running":
		a.running[name] = now.Sub(t0)
	case "Failed":
		a.failed[name] = phase
	default:
		return
	}
	if len(a.running)+len(a.failed) >= a.want {
		a.once.Do(func() { close(a.done) })
	}
}

// wait waits until every object arrived or failed, at most timeout.
func (a *arrivals) wait(ctx context.Context, timeout time.Duration) error {
	select {
	case <-a.done:
		return nil
	case <-time.After(timeout):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// durations are the creates → Running of the objects whose names have prefix, sorted.
func (a *arrivals) durations(prefix string) (ds []time.Duration, created int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for name := range a.created {
		if len(name) >= len(prefix) && name[:len(prefix)] == prefix {
			created++
			if d, ok := a.running[name]; ok {
				ds = append(ds, d)
			}
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds, created
}
