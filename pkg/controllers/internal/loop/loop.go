// Package loop is the worker loop every NativeVirt controller shares: a typed rate-limited
// workqueue of namespace/name keys drained by a few workers, as in kubernetes/sample-controller.
// A sync function decides everything about one key; the loop only retries and requeues.
package loop

import (
	"context"
	"fmt"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Result tells the loop what to do with a key that synced without error.
type Result struct {
	// RequeueAfter, when positive, syncs the key again after that long (a back-off ending, a
	// heartbeat going stale).
	RequeueAfter time.Duration
}

// SyncFunc reconciles one key. An error requeues it with rate limiting.
type SyncFunc func(ctx context.Context, key string) (Result, error)

// Queue is a controller's workqueue with its sync function.
type Queue struct {
	name  string
	queue workqueue.TypedRateLimitingInterface[string]
	sync  SyncFunc
}

// New returns a queue named name (used in logs and metrics) that calls sync for each key.
func New(name string, sync SyncFunc) *Queue {
	return &Queue{
		name: name,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name}),
		sync: sync,
	}
}

// Add queues key.
func (q *Queue) Add(key string) { q.queue.Add(key) }

// AddAfter queues key after d.
func (q *Queue) AddAfter(key string, d time.Duration) { q.queue.AddAfter(key, d) }

// AddObject queues the namespace/name key of obj (also of a cache tombstone).
func (q *Queue) AddObject(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("%s: no key for %T: %w", q.name, obj, err))
		return
	}
	q.queue.Add(key)
}

// Len is the number of keys waiting.
func (q *Queue) Len() int { return q.queue.Len() }

// Run waits for the informers to sync, then runs workers until ctx ends, and shuts the queue down.
func (q *Queue) Run(ctx context.Context, workers int, synced ...cache.InformerSynced) error {
	defer utilruntime.HandleCrash()
	defer q.queue.ShutDown()
	logger := klog.FromContext(ctx).WithValues("controller", q.name)
	ctx = klog.NewContext(ctx, logger)
	logger.Info("Starting controller")
	if !cache.WaitForNamedCacheSync(q.name, ctx.Done(), synced...) {
		// It gives up only when ctx ends: stopped before the caches synced is a shutdown.
		logger.Info("Stopped before the caches synced")
		return nil
	}
	if workers < 1 {
		workers = 1
	}
	for i := 0; i < workers; i++ {
		go wait.UntilWithContext(ctx, q.runWorker, time.Second)
	}
	<-ctx.Done()
	logger.Info("Stopping controller")
	return nil
}

func (q *Queue) runWorker(ctx context.Context) {
	for q.ProcessNext(ctx) {
	}
}

// ProcessNext syncs one key; false once the queue is shut down. Tests call it directly.
func (q *Queue) ProcessNext(ctx context.Context) bool {
	key, shutdown := q.queue.Get()
	if shutdown {
		return false
	}
	defer q.queue.Done(key)
	logger := klog.FromContext(ctx).WithValues("key", key)
	res, err := q.sync(klog.NewContext(ctx, logger), key)
	if err != nil {
		logger.V(2).Info("Sync failed, requeueing", "err", err)
		q.queue.AddRateLimited(key)
		return true
	}
	q.queue.Forget(key)
	if res.RequeueAfter > 0 {
		q.queue.AddAfter(key, res.RequeueAfter)
	}
	return true
}

// ShutDown stops the queue; ProcessNext then returns false.
func (q *Queue) ShutDown() { q.queue.ShutDown() }

// Earliest returns the smaller positive duration of a and b (0 when neither is positive), for
// combining the requeue wishes of several sub-reconcilers.
func Earliest(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	case a < b:
		return a
	default:
		return b
	}
}
